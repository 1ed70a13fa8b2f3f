"""Reads deploy/kubernetes for scripts/check-kubernetes (run with the tools' Python, which has
PyYAML).

  manifests.py render DIR        the kustomization's output, as `kustomize build DIR` gives it
                                 for the fields used here (resources, images); any other field
                                 is refused, so this rendering cannot silently differ from
                                 kustomize's
  manifests.py env DIR           the container's environment from the ConfigMap and the Secret
                                 template, one NAME=VALUE a line
  manifests.py agree DIR ROOT    that the manifests agree with the server and the image: ports,
                                 probes, user, drain time; one `ok`/`FAIL` line per check

Every error is a message on stderr and exit status 1.
"""

import re
import sys
from pathlib import Path

import yaml

SECRET_TEMPLATE = "secret.template.yaml"
KUSTOMIZATION = "kustomization.yaml"
KNOWN_KUSTOMIZATION_FIELDS = {"apiVersion", "kind", "resources", "images"}
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def fail(message):
    print(f"manifests.py: {message}", file=sys.stderr)
    sys.exit(1)


def documents(path):
    try:
        return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except yaml.YAMLError as error:
        fail(f"{path}: not YAML: {error}")


def kustomization(directory):
    found = documents(directory / KUSTOMIZATION)
    if len(found) != 1 or not isinstance(found[0], dict):
        fail(f"{directory / KUSTOMIZATION}: expected one mapping")
    k = found[0]
    unknown = set(k) - KNOWN_KUSTOMIZATION_FIELDS
    if unknown:
        fail(
            f"{KUSTOMIZATION} uses {sorted(unknown)}: this renderer knows only "
            f"{sorted(KNOWN_KUSTOMIZATION_FIELDS)}; teach it the new field (and check its output "
            "against `kustomize build`) before using it"
        )
    resources = k.get("resources") or []
    on_disk = {p.name for p in directory.glob("*.yaml")} - {KUSTOMIZATION, SECRET_TEMPLATE}
    if sorted(resources) != sorted(on_disk):
        fail(
            f"{KUSTOMIZATION} lists {sorted(resources)} but the folder holds {sorted(on_disk)} "
            f"(besides {SECRET_TEMPLATE}, applied by hand): every manifest is listed once"
        )
    return k


def set_image(container, images):
    """Applies kustomize's `images` rule to one container: a matching name gets the new name,
    and the new digest or tag."""
    name, _, digest = container["image"].partition("@")
    # A tag follows the last `:` after the last `/` (a registry's `host:port/` is not a tag).
    slash = name.rfind("/")
    colon = name.rfind(":")
    tag = ""
    if colon > slash:
        name, tag = name[:colon], name[colon + 1 :]
    for image in images:
        if image["name"] != name:
            continue
        new_name = image.get("newName", name)
        if "digest" in image:
            container["image"] = f"{new_name}@{image['digest']}"
        elif "newTag" in image:
            container["image"] = f"{new_name}:{image['newTag']}"
        elif digest:
            container["image"] = f"{new_name}@{digest}"
        else:
            container["image"] = f"{new_name}:{tag}" if tag else new_name


def render(directory):
    k = kustomization(directory)
    rendered = []
    for resource in k.get("resources") or []:
        for document in documents(directory / resource):
            spec = (document.get("spec") or {}).get("template", {}).get("spec", {})
            for key in ("initContainers", "containers"):
                for container in spec.get(key) or []:
                    set_image(container, k.get("images") or [])
            rendered.append(document)
    return rendered


def find(objects, kind):
    found = [o for o in objects if o.get("kind") == kind]
    if len(found) != 1:
        fail(f"expected one {kind}, found {len(found)}")
    return found[0]


def environment(directory):
    objects = render(directory)
    config = find(objects, "ConfigMap").get("data") or {}
    secret = find(documents(directory / SECRET_TEMPLATE), "Secret").get("stringData") or {}
    deployment = find(objects, "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    sources = container.get("envFrom") or []
    referenced = {(next(iter(s)), next(iter(s.values()))["name"]) for s in sources}
    expected = {
        ("configMapRef", find(objects, "ConfigMap")["metadata"]["name"]),
        ("secretRef", find(documents(directory / SECRET_TEMPLATE), "Secret")["metadata"]["name"]),
    }
    if referenced != expected:
        fail(f"the container's envFrom names {sorted(referenced)}, expected {sorted(expected)}")
    if container.get("env"):
        fail("the container sets `env` directly: keep every setting in the ConfigMap or Secret")
    env = dict(config)
    # envFrom skips a Secret key that is not a variable name (push-signing.pem, a mounted file).
    env.update({k: v for k, v in secret.items() if ENV_NAME.match(k)})
    return env


def agree(directory, root):
    objects = render(directory)
    env = environment(directory)
    deployment = find(objects, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    dockerfile = (root / "Dockerfile").read_text()
    results = []

    def check(name, got, expected):
        results.append((name, got == expected, got, expected))

    bind_port = int(env["A2A__SERVER__BIND"].rsplit(":", 1)[1])
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    check("the container port is the bind address's port", ports.get("http"), bind_port)
    exposed = re.search(r"^EXPOSE (\d+)", dockerfile, re.M)
    check("the image exposes that port", int(exposed.group(1)) if exposed else None, bind_port)
    service = find(objects, "Service")
    check("the Service targets that port", service["spec"]["ports"][0]["targetPort"], "http")
    check("readiness probes /readyz", container["readinessProbe"]["httpGet"]["path"], "/readyz")
    check("liveness probes /healthz", container["livenessProbe"]["httpGet"]["path"], "/healthz")
    uid = re.search(r"useradd .*--uid (\d+)", dockerfile)
    check(
        "the pod runs as the image's user",
        pod["securityContext"].get("runAsUser"),
        int(uid.group(1)) if uid else None,
    )
    check("the pod runs as non-root", pod["securityContext"].get("runAsNonRoot"), True)
    security = container["securityContext"]
    check("the root file system is read-only", security.get("readOnlyRootFilesystem"), True)
    check("every capability is dropped", security.get("capabilities", {}).get("drop"), ["ALL"])
    check("no privilege escalation", security.get("allowPrivilegeEscalation"), False)
    check("seccomp RuntimeDefault", pod["securityContext"].get("seccompProfile"), {"type": "RuntimeDefault"})
    key_path = env.get("A2A__PUSH__SIGNING_KEY_PATH", "")
    mounts = [m["mountPath"] for m in container.get("volumeMounts") or []]
    check(
        "the push signing key's path is inside a mounted volume",
        any(key_path.startswith(m.rstrip("/") + "/") for m in mounts),
        True,
    )
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    pause = int(pre_stop[1]) if pre_stop[:1] == ["sleep"] else 0
    grace = int(env.get("A2A__SERVER__SHUTDOWN_GRACE_SECS", 30))
    delivery = int(env.get("A2A__PUSH__DELIVERY_TIMEOUT_MS", 10000)) / 1000
    needed = pause + grace + delivery
    period = pod["terminationGracePeriodSeconds"]
    check(
        f"terminationGracePeriodSeconds ({period}) covers the preStop pause ({pause} s), the "
        f"shutdown grace ({grace} s) and a push delivery ({delivery:g} s)",
        period >= needed,
        True,
    )
    hpa = find(objects, "HorizontalPodAutoscaler")
    check("the autoscaler keeps two replicas at least", hpa["spec"]["minReplicas"] >= 2, True)
    check("the Deployment leaves its replica count to the autoscaler", "replicas" in deployment["spec"], False)
    failed = 0
    for name, ok, got, expected in results:
        print(f"ok   {name}" if ok else f"FAIL {name}: expected {expected!r}, got {got!r}")
        failed += not ok
    return failed


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    command, directory = sys.argv[1], Path(sys.argv[2])
    if command == "render":
        yaml.safe_dump_all(render(directory), sys.stdout, sort_keys=False)
    elif command == "env":
        for name, value in environment(directory).items():
            if "\n" in str(value):
                fail(f"{name}: a variable's value spans lines")
            print(f"{name}={value}")
    elif command == "agree" and len(sys.argv) == 4:
        sys.exit(1 if agree(directory, Path(sys.argv[3])) else 0)
    else:
        fail(__doc__)


if __name__ == "__main__":
    main()
