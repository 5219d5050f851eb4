"""deploy/k8s: the kustomize base (API) and the optional worker."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.helpers import (
    K8S,
    UVICORN_ENV_NAMES,
    env_names_in,
    known_env_names,
    load_yaml_all,
    quantity,
    selects,
)

EXPECTED_KINDS = {
    "ConfigMap": "v1",
    "Deployment": "apps/v1",
    "Service": "v1",
    "HorizontalPodAutoscaler": "autoscaling/v2",
    "PodDisruptionBudget": "policy/v1",
}
WORKER = K8S / "worker"


def _manifests(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Every YAML file of a directory tree (kustomization files included), parsed."""
    files = sorted(directory.rglob("*.yaml")) + sorted(directory.rglob("*.yml"))
    assert files, f"no manifests in {directory}"
    return {f.relative_to(directory).as_posix(): load_yaml_all(f) for f in files}


def _objects(directory: Path) -> list[dict[str, Any]]:
    """The objects of one kustomization (its listed resources)."""
    kustomization = load_yaml_all(directory / "kustomization.yaml")[0]
    objects: list[dict[str, Any]] = []
    for resource in kustomization["resources"]:
        objects += load_yaml_all(directory / resource)
    return objects


def _one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind]
    assert len(found) == 1, f"{len(found)} {kind} objects"
    return found[0]


def base() -> dict[str, dict[str, Any]]:
    objects = _objects(K8S)
    return {kind: _one(objects, kind) for kind in EXPECTED_KINDS}


def worker() -> dict[str, Any]:
    return _one(_objects(WORKER), "Deployment")


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    container: dict[str, Any] = containers[0]
    return container


def _container_port(container: dict[str, Any], port: int | str) -> int:
    """A probe's or Service's port (number or name) resolved against the container's ports."""
    for entry in container.get("ports") or []:
        if port in (entry["containerPort"], entry.get("name")):
            return int(entry["containerPort"])
    raise AssertionError(f"port {port!r} is not a container port")


# --- every file ------------------------------------------------------------------------------


def test_every_manifest_parses_and_names_itself() -> None:
    for name, docs in _manifests(K8S).items():
        assert docs, f"{name} is empty"
        for doc in docs:
            assert isinstance(doc, dict), name
            assert doc.get("apiVersion") and doc.get("kind"), name
            if doc["kind"] not in {"Kustomization", "Component"}:
                assert doc["metadata"]["name"], name
                assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", doc["metadata"]["name"])


@pytest.mark.parametrize("directory", [K8S, WORKER], ids=["base", "worker"])
def test_kustomization_lists_every_manifest_of_its_directory(directory: Path) -> None:
    (kustomization,) = load_yaml_all(directory / "kustomization.yaml")
    assert kustomization["kind"] == "Kustomization"
    listed = kustomization["resources"]
    assert len(listed) == len(set(listed)), "listed twice"
    files = {
        p.name for p in directory.iterdir()
        if p.suffix in {".yaml", ".yml"} and p.name != "kustomization.yaml"
    }
    assert set(listed) == files


def test_every_kustomization_is_tested() -> None:
    directories = {p.parent for p in K8S.rglob("kustomization.yaml")}
    assert directories == {K8S, WORKER}


def test_base_has_each_kind_with_its_api_version() -> None:
    objects = _objects(K8S)
    kinds = {o["kind"]: o["apiVersion"] for o in objects}
    assert kinds == EXPECTED_KINDS
    assert len(objects) == len(EXPECTED_KINDS)


# --- the API Deployment ----------------------------------------------------------------------


def deployment_problems(deployment: dict[str, Any], config: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    spec = deployment["spec"]
    pod = spec["template"]
    labels = pod["metadata"]["labels"]
    if not selects(spec["selector"]["matchLabels"], labels):
        problems.append("selector does not match the pod labels")
    if int(spec.get("replicas", 1)) < 2:
        problems.append("fewer than 2 replicas")
    container = _container(deployment)
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        get = (container.get(probe) or {}).get("httpGet") or {}
        if get.get("path") != path:
            problems.append(f"{probe} does not GET {path}")
            continue
        try:
            port = _container_port(container, get["port"])
        except AssertionError as exc:
            problems.append(f"{probe}: {exc}")
            continue
        if str(port) != config["data"].get("SKYLINE_PORT", "8000"):
            problems.append(f"{probe}: port {port} is not SKYLINE_PORT")
    resources = container.get("resources") or {}
    for level in ("requests", "limits"):
        for name in ("cpu", "memory"):
            if name not in (resources.get(level) or {}):
                problems.append(f"no {name} {level[:-1]}")
    if not problems:
        for name in ("cpu", "memory"):
            if quantity(resources["requests"][name]) > quantity(resources["limits"][name]):
                problems.append(f"{name} request above its limit")
    pod_security = pod["spec"].get("securityContext") or {}
    security = container.get("securityContext") or {}
    if not (security.get("runAsNonRoot") or pod_security.get("runAsNonRoot")):
        problems.append("not runAsNonRoot")
    if security.get("runAsUser", pod_security.get("runAsUser")) == 0:
        problems.append("runAsUser 0")
    if security.get("readOnlyRootFilesystem") is not True:
        problems.append("root filesystem is writable")
    if security.get("allowPrivilegeEscalation") is not False:
        problems.append("privilege escalation allowed")
    if security.get("readOnlyRootFilesystem"):
        mounts = {m["mountPath"] for m in container.get("volumeMounts") or []}
        if "/tmp" not in mounts:
            problems.append("read-only root filesystem without a writable /tmp")
    sources = [s["configMapRef"]["name"] for s in container.get("envFrom") or []
               if "configMapRef" in s]
    if sources != [config["metadata"]["name"]]:
        problems.append("environment not taken from the ConfigMap")
    command = (container.get("command") or []) + (container.get("args") or [])
    if command and command != ["skyline", "serve"]:
        problems.append(f"runs {command}, not skyline serve")
    return problems


def test_api_deployment() -> None:
    objects = base()
    assert deployment_problems(objects["Deployment"], objects["ConfigMap"]) == []


@pytest.mark.parametrize(
    ("edit", "complaint"),
    [
        (lambda d: d["spec"].update(replicas=1), "fewer than 2"),
        (lambda d: _container(d)["readinessProbe"]["httpGet"].update(path="/healthz"), "/readyz"),
        (lambda d: _container(d)["livenessProbe"]["httpGet"].update(path="/readyz"), "/healthz"),
        (lambda d: _container(d)["livenessProbe"]["httpGet"].update(port="metrics"),
         "not a container port"),
        (lambda d: _container(d)["ports"][0].update(containerPort=9000), "not SKYLINE_PORT"),
        (lambda d: _container(d)["resources"].pop("limits"), "limit"),
        (lambda d: _container(d)["resources"]["requests"].update(memory="1Gi"), "above its limit"),
        (lambda d: (_container(d)["securityContext"].pop("runAsNonRoot"),
                    d["spec"]["template"]["spec"]["securityContext"].pop("runAsNonRoot")),
         "runAsNonRoot"),
        (lambda d: _container(d)["securityContext"].update(readOnlyRootFilesystem=False),
         "writable"),
        (lambda d: _container(d).pop("volumeMounts"), "/tmp"),
        (lambda d: _container(d).pop("envFrom"), "ConfigMap"),
        (lambda d: _container(d).update(args=["skyline", "worker"]), "not skyline serve"),
        (lambda d: d["spec"]["selector"]["matchLabels"].update(app="other"), "selector"),
    ],
)
def test_deployment_checker_catches(edit: Any, complaint: str) -> None:
    objects = base()
    deployment = copy.deepcopy(objects["Deployment"])
    edit(deployment)
    problems = deployment_problems(deployment, objects["ConfigMap"])
    assert any(complaint in p for p in problems), problems


# --- Service, HPA, PDB ---------------------------------------------------------------------


def test_service_selects_the_api_pods_on_the_container_port() -> None:
    objects = base()
    service, deployment = objects["Service"], objects["Deployment"]
    selector = service["spec"]["selector"]
    assert selects(selector, deployment["spec"]["template"]["metadata"]["labels"])
    assert not selects(selector, worker()["spec"]["template"]["metadata"]["labels"])
    assert service["spec"].get("sessionAffinity", "None") == "None", "replicas are stateless"
    container = _container(deployment)
    for port in service["spec"]["ports"]:
        assert _container_port(container, port.get("targetPort", port["port"])) == 8000


def test_hpa_scales_the_api_deployment_on_cpu() -> None:
    objects = base()
    hpa, deployment = objects["HorizontalPodAutoscaler"], objects["Deployment"]
    target = hpa["spec"]["scaleTargetRef"]
    assert target == {"apiVersion": "apps/v1", "kind": "Deployment",
                      "name": deployment["metadata"]["name"]}
    assert 2 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    assert hpa["spec"]["minReplicas"] <= deployment["spec"]["replicas"] <= hpa["spec"][
        "maxReplicas"]
    cpu = [m for m in hpa["spec"]["metrics"]
           if m["type"] == "Resource" and m["resource"]["name"] == "cpu"]
    assert cpu and cpu[0]["resource"]["target"]["type"] == "Utilization"
    assert 0 < cpu[0]["resource"]["target"]["averageUtilization"] <= 100
    assert "cpu" in _container(deployment)["resources"]["requests"], "Utilization needs a request"


def test_pdb_covers_the_api_pods_and_lets_drains_proceed() -> None:
    objects = base()
    pdb, deployment = objects["PodDisruptionBudget"], objects["Deployment"]
    selector = pdb["spec"]["selector"]["matchLabels"]
    assert selects(selector, deployment["spec"]["template"]["metadata"]["labels"])
    assert not selects(selector, worker()["spec"]["template"]["metadata"]["labels"])
    spec = pdb["spec"]
    assert ("minAvailable" in spec) != ("maxUnavailable" in spec)
    minimum = objects["HorizontalPodAutoscaler"]["spec"]["minReplicas"]
    if "minAvailable" in spec:
        assert isinstance(spec["minAvailable"], int) and 1 <= spec["minAvailable"] < minimum
    else:
        assert spec["maxUnavailable"] in {1, "1"} or str(spec["maxUnavailable"]).endswith("%")


# --- configuration ---------------------------------------------------------------------------


def _referenced_env_names() -> set[str]:
    """Every SKYLINE_* name the manifests set or reference."""
    names: set[str] = set()
    objects = _objects(K8S) + _objects(WORKER)
    for obj in objects:
        if obj["kind"] == "ConfigMap":
            names |= set(obj["data"])
        if obj["kind"] == "Deployment":
            for container in obj["spec"]["template"]["spec"]["containers"]:
                names |= {e["name"] for e in container.get("env") or []}
                names |= env_names_in((container.get("command") or [])
                                      + (container.get("args") or []))
    return {n for n in names if n.startswith("SKYLINE_")}


def test_configmap_keys_are_settings_the_cli_reads() -> None:
    known, source = known_env_names()
    used = _referenced_env_names()
    assert used, "the manifests set no SKYLINE_* variable"
    assert used <= known, f"unknown to the CLI ({source}): {sorted(used - known)}"
    config = base()["ConfigMap"]["data"]
    others = {k for k in config if not k.startswith("SKYLINE_")}
    assert others <= UVICORN_ENV_NAMES, f"not read by skyline serve: {sorted(others)}"


def test_configmap_values() -> None:
    objects = base()
    data = objects["ConfigMap"]["data"]
    assert all(isinstance(v, str) for v in data.values()), "ConfigMap values must be strings"
    assert data["SKYLINE_HOST"] == "0.0.0.0"
    assert data["SKYLINE_PORT"] == str(_container(objects["Deployment"])["ports"][0][
        "containerPort"])
    # more than one replica needs a shared store: the embedded default would split matches
    assert ("SKYLINE_REDIS_URL" in data) != ("SKYLINE_REDIS_CLUSTER" in data)
    if "SKYLINE_REDIS_URL" in data:
        assert re.match(r"rediss?://", data["SKYLINE_REDIS_URL"])


# --- the optional worker -------------------------------------------------------------------


def test_worker_runs_skyline_worker_on_the_shared_redis() -> None:
    objects = base()
    deployment = worker()
    assert deployment["metadata"]["name"] != objects["Deployment"]["metadata"]["name"]
    spec = deployment["spec"]
    assert selects(spec["selector"]["matchLabels"], spec["template"]["metadata"]["labels"])
    container = _container(deployment)
    command = (container.get("command") or []) + (container.get("args") or [])
    assert command[:2] == ["skyline", "worker"]
    redis_url = command[command.index("--redis-url") + 1]
    configmaps = [s["configMapRef"]["name"] for s in container["envFrom"] if "configMapRef" in s]
    assert configmaps == [objects["ConfigMap"]["metadata"]["name"]]
    # $(VAR) in args is expanded from the container environment: it must be defined there
    for name in re.findall(r"\$\((\w+)\)", redis_url):
        assert name in objects["ConfigMap"]["data"]
    api = _container(objects["Deployment"])
    assert container["image"] == api["image"]
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    pod_security = spec["template"]["spec"].get("securityContext") or {}
    assert security.get("runAsNonRoot") or pod_security.get("runAsNonRoot")
    for level in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(container["resources"][level])


def test_images_agree_across_kustomizations() -> None:
    images = []
    for directory in (K8S, WORKER):
        (kustomization,) = load_yaml_all(directory / "kustomization.yaml")
        images.append(kustomization.get("images"))
    assert images[0] == images[1]


def test_quantities() -> None:
    assert quantity("250m") == 0.25
    assert quantity("1") == 1
    assert quantity("256Mi") == 256 * 2**20
    assert quantity("1G") == 1e9


def test_env_names_come_from_the_cli_once_it_names_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a CLI that reads only SKYLINE_PORT, the manifests' other names are reported."""
    from tests.deploy import helpers

    (tmp_path / "service").mkdir()
    (tmp_path / "service" / "cli.py").write_text(
        'import os\nPORT = os.environ.get("SKYLINE_PORT", "8000")\nPREFIX = "SKYLINE_"\n'
    )
    monkeypatch.setattr(helpers, "REPO", tmp_path)
    monkeypatch.setattr(helpers, "_names_from_parser", set)
    known, source = helpers.known_env_names()
    assert known == {"SKYLINE_PORT"} and source.startswith("service/ source")
    assert not _referenced_env_names() <= known
