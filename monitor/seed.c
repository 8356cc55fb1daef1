// SPDX-License-Identifier: BSD-2-Clause
#include "seed.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

const char *rm_seed_id_field(unsigned type)
{
	switch (type) {
	case RM_QP: return "lqpn";
	case RM_CQ: return "cqn";
	case RM_PD: return "pdn";
	case RM_MR: return "mrn";
	case RM_CM_ID: return "cm_idn";
	case RM_CTX: return "ctxn";
	case RM_SRQ: return "srqn";
	default: return NULL;
	}
}

int rm_seed_parse(const char *json_text, unsigned type, struct rm_seed_row **rows, size_t *n,
		  char *err, size_t errlen)
{
	const char *idf = rm_seed_id_field(type);
	json_error_t je;
	json_t *root, *v;
	size_t i;

	*rows = NULL;
	*n = 0;
	if (!idf) {
		snprintf(err, errlen, "rdma resource does not list %s objects", rm_type_name(type));
		return -1;
	}
	root = json_loads(json_text, 0, &je);
	if (!root || !json_is_array(root)) {
		snprintf(err, errlen, "rdma -j resource show %s: not a JSON array (%s)",
			 rm_type_name(type), root ? "other JSON" : je.text);
		json_decref(root);
		return -1;
	}
	*rows = calloc(json_array_size(root) + 1, sizeof(**rows));
	if (!*rows) {
		json_decref(root);
		snprintf(err, errlen, "no memory");
		return -1;
	}
	json_array_foreach(root, i, v) {
		json_t *id = json_object_get(v, idf), *ifx = json_object_get(v, "ifindex");
		json_t *pid = json_object_get(v, "pid"), *comm = json_object_get(v, "comm");
		struct rm_seed_row *r = &(*rows)[*n];

		if (!json_is_integer(id) || !json_is_integer(ifx)) {
			snprintf(err, errlen, "rdma -j resource show %s: object %zu has no %s or ifindex",
				 rm_type_name(type), i, idf);
			free(*rows);
			*rows = NULL;
			*n = 0;
			json_decref(root);
			return -1;
		}
		r->k.id = (uint64_t)json_integer_value(id);
		r->k.dev = (uint32_t)json_integer_value(ifx);
		r->k.type = type;
		r->o.seeded = 1;
		/* kernel objects carry no pid; their comm is the kernel owner */
		r->o.kern = !json_is_integer(pid);
		r->o.pid = r->o.kern ? 0 : (uint32_t)json_integer_value(pid);
		if (json_is_string(json_object_get(v, "ifname")))
			strncpy(r->ifname, json_string_value(json_object_get(v, "ifname")),
				sizeof(r->ifname) - 1);
		if (json_is_string(comm))
			strncpy(r->o.comm, json_string_value(comm), sizeof(r->o.comm) - 1);
		(*n)++;
	}
	json_decref(root);
	return 0;
}

int rm_proc_cgroup(const char *proc_root, uint32_t pid, char *buf, size_t len)
{
	char path[256], line[4096];
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/%u/cgroup", proc_root, pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (strlen(line + 3) < len) {
			strcpy(buf, line + 3);
			rc = 0;
		}
		break;
	}
	fclose(f);
	return rc;
}
