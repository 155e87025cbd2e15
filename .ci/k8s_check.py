#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Offline check of the Kubernetes manifests in contrib/kubernetes (make lint).

No cluster and no OpenAPI schema: every YAML file must parse, and every document must keep
a small schema of the project's own, enough to catch what a hand edit breaks:

- each document has apiVersion, kind and metadata.name;
- its kind is one the examples use (an unknown kind is refused: a typo in kind is one);
- a DaemonSet's spec.selector.matchLabels is a subset of spec.template.metadata.labels (the
  API server refuses a selector that does not select its own template), and each of its
  containers has a name and an image;
- a Pod has the annotation io.launch.policy (the examples are about it), and containers
  with a name and an image.

Arguments: YAML files or folders (searched for *.yaml and *.yml); none: contrib/kubernetes.
Prints one line per problem, FILE: document N: WHAT, then "k8s: N documents clean" or
exits 1. tests/selftest/k8s-check proves it can fail.
"""

import os
import sys

try:
    import yaml
except ImportError:
    sys.exit("k8s: PyYAML is missing (Debian: python3-yaml; make deps installs it)")

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DEFAULT_DIR = os.path.join(ROOT, "contrib", "kubernetes")
POLICY_ANNOTATION = "io.launch.policy"
KNOWN_KINDS = {"Namespace", "DaemonSet", "Pod", "ConfigMap", "RuntimeClass", "ServiceAccount"}


def get(doc, path):
    """The value at a dotted path of mappings, or None where one is missing."""
    for key in path.split("."):
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def check_containers(pod_spec, where):
    problems = []
    containers = get(pod_spec, "containers")
    if not isinstance(containers, list) or not containers:
        return ["%s.containers is not a non-empty list" % where]
    for kind in ("initContainers", "containers"):
        for i, c in enumerate(get(pod_spec, kind) or []):
            for field in ("name", "image"):
                if not isinstance(get(c, field), str) or not get(c, field):
                    problems.append("%s.%s[%d] has no %s" % (where, kind, i, field))
    return problems


def check_daemonset(doc):
    problems = []
    match = get(doc, "spec.selector.matchLabels")
    labels = get(doc, "spec.template.metadata.labels")
    if not isinstance(match, dict) or not match:
        problems.append("spec.selector.matchLabels is missing")
    elif not isinstance(labels, dict):
        problems.append("spec.template.metadata.labels is missing")
    else:
        for k, v in match.items():
            if labels.get(k) != v:
                problems.append("spec.selector.matchLabels %s=%s is not in "
                                "spec.template.metadata.labels" % (k, v))
    problems += check_containers(get(doc, "spec.template.spec"), "spec.template.spec")
    return problems


def check_pod(doc):
    problems = []
    annotations = get(doc, "metadata.annotations")
    if not isinstance(annotations, dict) or not annotations.get(POLICY_ANNOTATION):
        problems.append("metadata.annotations has no %s" % POLICY_ANNOTATION)
    return problems + check_containers(get(doc, "spec"), "spec")


def check_document(doc):
    """The problems of one parsed document, as strings."""
    if not isinstance(doc, dict):
        return ["is not a mapping"]
    problems = []
    for field in ("apiVersion", "kind", "metadata.name"):
        value = get(doc, field)
        if not isinstance(value, str) or not value:
            problems.append("has no %s" % field)
    kind = doc.get("kind")
    if isinstance(kind, str) and kind and kind not in KNOWN_KINDS:
        problems.append("kind %s is not one this check knows (%s)" % (
            kind, ", ".join(sorted(KNOWN_KINDS))))
    elif kind == "DaemonSet":
        problems += check_daemonset(doc)
    elif kind == "Pod":
        problems += check_pod(doc)
    return problems


def yaml_files(args):
    for a in args:
        if os.path.isdir(a):
            for dirpath, _, names in sorted(os.walk(a)):
                for n in sorted(names):
                    if n.endswith((".yaml", ".yml")):
                        yield os.path.join(dirpath, n)
        else:
            yield a


def main(argv):
    files = list(yaml_files(argv or [DEFAULT_DIR]))
    if not files:
        print("k8s: no YAML file in %s" % " ".join(argv or [DEFAULT_DIR]))
        return 1
    failed = False
    count = 0
    for path in files:
        name = os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path
        try:
            with open(path) as f:
                docs = list(yaml.safe_load_all(f))
        except (OSError, yaml.YAMLError) as e:
            print("%s: %s" % (name, str(e).replace("\n", " ")))
            failed = True
            continue
        # An empty document (a trailing "---") is no object.
        for i, doc in enumerate(d for d in docs if d is not None):
            count += 1
            for p in check_document(doc):
                print("%s: document %d: %s" % (name, i + 1, p))
                failed = True
    if failed:
        return 1
    print("k8s: %d documents in %d files clean" % (count, len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
