#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes the lists of fields that tests/unit/test_audit_schema.c checks the golden documents
against, from the published schemas' own source (not from launch's code):

  OCSF 1.3.0: github.com/ocsf/ocsf-schema, tag 1.3.0 (commit c8bde8c4cc7e93bb4a36e873623bbe099da22fb5):
      events/**/*.json, objects/*.json, includes/**/*.json, profiles/*.json, dictionary.json,
      categories.json, resolved the way the OCSF server compiles them (extends, $include,
      profiles).
  ECS 8.11.0: github.com/elastic/ecs, tag v8.11.0: generated/ecs/ecs_flat.yml.

usage: extract.py OCSF_GIT_DIR ECS_GIT_DIR   (run from the repository's root; rewrites
       tests/unit/schema/ocsf-1.3.0.txt and ecs-8.11.0.txt)
Needs python3-yaml; only for regenerating the lists, never in the build or the tests.
"""
import json
import subprocess
import sys

import yaml

OCSF_TAG = "1.3.0"
ECS_TAG = "v8.11.0"
# The classes launch writes, and every object their documents may hold (the test refuses an
# object it has no definition of: add it here and rerun).
OCSF_CLASSES = ["base_event", "network_activity", "dns_activity", "kernel_activity",
                "process_activity", "entity_management", "http_activity"]
OCSF_OBJECTS = ["metadata", "product", "device", "actor", "process", "file", "user",
                "network_endpoint", "network_connection_info", "dns_query", "dns_answer",
                "kernel", "managed_entity", "policy", "http_request", "http_response", "url"]
# ECS field sets launch's documents use; "launch" is ours (custom fields).
ECS_SETS = ["@timestamp", "ecs", "event", "host", "observer", "process", "destination",
            "source", "server", "client", "network", "dns", "labels", "message", "tags",
            "http", "url"]


def git_show(repo, tag, path):
    return subprocess.run(["git", "--git-dir", repo, "show", f"{tag}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def git_ls(repo, tag, folder):
    out = subprocess.run(["git", "--git-dir", repo, "ls-tree", "-r", "--name-only", tag,
                          folder], check=True, capture_output=True, text=True).stdout
    return [p for p in out.split() if p.endswith(".json")]


class Ocsf:
    def __init__(self, repo):
        self.repo = repo
        self.dictionary = self.load("dictionary.json")
        self.categories = self.load("categories.json")["attributes"]
        self.events = {}
        for path in git_ls(repo, OCSF_TAG, "events"):
            d = self.load(path)
            self.events[d["name"]] = (path, d)
        self.objects = {}
        for path in git_ls(repo, OCSF_TAG, "objects"):
            d = self.load(path)
            self.objects[d["name"]] = d

    def load(self, path):
        return json.loads(git_show(self.repo, OCSF_TAG, path))

    def merge_includes(self, attrs):
        out = {}
        for inc in attrs.get("$include", []):
            d = self.load(inc)
            profile = d["name"] if d.get("meta") == "profile" else None
            for k, v in d["attributes"].items():
                v = dict(v)
                if profile and "profile" not in v:
                    v["profile"] = profile
                out[k] = {**out.get(k, {}), **v}
        for k, v in attrs.items():
            if k != "$include":
                out[k] = {**out.get(k, {}), **v}
        return out

    def resolve_event(self, name):
        path, d = self.events[name]
        attrs = {}
        if d.get("extends"):
            attrs, _ = self.resolve_event(d["extends"])
        for k, v in self.merge_includes(d.get("attributes", {})).items():
            attrs[k] = {**attrs.get(k, {}), **v}
        return attrs, d

    def resolve_object(self, name):
        d = self.objects[name]
        attrs, constraints = {}, {}
        if d.get("extends") and d["extends"] != "object":
            attrs, constraints = self.resolve_object(d["extends"])
        for k, v in self.merge_includes(d.get("attributes", {})).items():
            attrs[k] = {**attrs.get(k, {}), **v}
        if "constraints" in d:
            constraints = d["constraints"]
        return attrs, constraints

    def base_type(self, attr_name, attr):
        entry = self.dictionary["attributes"].get(attr_name, {})
        t = attr.get("type") or entry.get("type")
        if t == "object_t":
            return "object:" + (attr.get("object_type") or entry.get("object_type"))
        types = self.dictionary["types"]["attributes"]
        if t in types:
            while t in types and types[t].get("type"):
                t = types[t]["type"]
            return t
        return "object:" + t

    def with_datetime(self, attrs):
        """The datetime profile: the OCSF server gives each timestamp_t attribute a sibling
        NAME_dt of type datetime_t (RFC 3339), as profiles/datetime.json says."""
        out = dict(attrs)
        for k, v in attrs.items():
            entry = self.dictionary["attributes"].get(k, {})
            if (v.get("type") or entry.get("type")) == "timestamp_t":
                out[k + "_dt"] = {"type": "datetime_t", "requirement": "optional",
                                  "profile": "datetime"}
        return out

    def category_of(self, name):
        _, d = self.events[name]
        if d.get("category"):
            return d["category"]
        return self.category_of(d["extends"]) if d.get("extends") else None

    def lines_for(self, kind, name, attrs):
        out = []
        for k in sorted(attrs):
            v = attrs[k]
            entry = self.dictionary["attributes"].get(k, {})
            t = self.base_type(k, v)
            array = "array" if entry.get("is_array") or v.get("is_array") else "single"
            req = v.get("requirement", "optional")
            profile = v.get("profile") or "-"
            out.append(f"{kind} {name} {k} {t} {array} {req} {profile}")
            enum = v.get("enum") or entry.get("enum")
            if enum and k.endswith("_id"):
                merged = dict(entry.get("enum", {}))
                merged.update(v.get("enum", {}))
                out.append(f"enum {name} {k} " + ",".join(sorted(merged, key=int)))
        return out


def ocsf(repo):
    o = Ocsf(repo)
    out = [f"# OCSF {OCSF_TAG}: github.com/ocsf/ocsf-schema tag {OCSF_TAG}, written by "
           "tests/unit/schema/extract.py; do not edit.",
           "# class UID NAME CATEGORY_UID",
           "# attr CLASS_UID ATTRIBUTE TYPE array|single REQUIREMENT PROFILE(-: none)",
           "# field OBJECT ATTRIBUTE TYPE array|single REQUIREMENT PROFILE",
           "# enum CLASS_UID|OBJECT ATTRIBUTE VALUES   (values an _id attribute may take)",
           "# oneof OBJECT ATTRIBUTE,ATTRIBUTE...      (at least one of them)"]
    for name in OCSF_CLASSES:
        attrs, d = o.resolve_event(name)
        attrs = o.with_datetime(attrs)
        cat_uid = o.categories.get(o.category_of(name), {"uid": 0})["uid"]
        uid = cat_uid * 1000 + d.get("uid", 0)
        out.append(f"class {uid} {name} {cat_uid}")
        out += o.lines_for("attr", str(uid), attrs)
    for name in OCSF_OBJECTS:
        attrs, constraints = o.resolve_object(name)
        attrs = o.with_datetime(attrs)
        out += o.lines_for("field", name, attrs)
        if constraints.get("at_least_one"):
            out.append(f"oneof {name} " + ",".join(constraints["at_least_one"]))
    return out


def ecs(repo):
    flat = yaml.safe_load(git_show(repo, ECS_TAG, "generated/ecs/ecs_flat.yml"))
    out = [f"# ECS {ECS_TAG[1:]}: github.com/elastic/ecs tag {ECS_TAG}, generated/ecs/ecs_flat.yml,"
           " written by tests/unit/schema/extract.py; do not edit.",
           "# field NAME TYPE array|single required|optional",
           "# allowed NAME VALUE [EXPECTED_EVENT_TYPE,...]"]
    for name in sorted(flat):
        f = flat[name]
        if name.split(".")[0] not in ECS_SETS:
            continue
        array = "array" if "array" in (f.get("normalize") or []) else "single"
        out.append(f"field {name} {f['type']} {array} "
                   f"{'required' if f.get('required') else 'optional'}")
        for v in f.get("allowed_values") or []:
            expected = ",".join(v.get("expected_event_types") or [])
            out.append(f"allowed {name} {v['name']}" + (f" {expected}" if expected else ""))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(f"tests/unit/schema/ocsf-{OCSF_TAG}.txt", "w") as f:
        f.write("\n".join(ocsf(sys.argv[1])) + "\n")
    with open(f"tests/unit/schema/ecs-{ECS_TAG[1:]}.txt", "w") as f:
        f.write("\n".join(ecs(sys.argv[2])) + "\n")


if __name__ == "__main__":
    main()
