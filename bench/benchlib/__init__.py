# SPDX-License-Identifier: BSD-2-Clause
"""bench/: sweeps, datasets, plots and comparisons for the perftest tools (stdlib only)."""
