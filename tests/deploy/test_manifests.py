"""Offline checks of deploy/: manifests against schemas, version pins, scripts and the template.

Nothing here talks to a cluster, a registry or Google Cloud. Each test compares the content
of real files under deploy/ with a JSON Schema in deploy/schemas/, with another file of the
repository (pyproject.toml, a sibling manifest or script), or with what the installed
apache-beam 2.77 accepts, so that an edit to one side that the other does not follow fails.

    PYTHONPATH=src:. python -m pytest tests/deploy -q
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import re
import shutil
import stat
import string
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
SCHEMAS = DEPLOY / "schemas"
DATAFLOW = DEPLOY / "dataflow"
FLINK = DEPLOY / "flink"
JOB_SERVER_IMAGE_SAMPLE = "us-central1-docker.pkg.dev/p/corpusforge/flink-job-server:test"

DOCKERFILE = DATAFLOW / "Dockerfile"
METADATA = DATAFLOW / "metadata.json"
FLEX_MAIN = DATAFLOW / "flex_main.py"
FLINKDEPLOYMENT = FLINK / "flinkdeployment.yaml"
JOBSERVER = FLINK / "jobserver.yaml"
APPLY_SH = FLINK / "apply.sh"
SUBMIT_SH = FLINK / "submit.sh"
BUILD_SH = DATAFLOW / "build.sh"
LAUNCH_SH = DATAFLOW / "launch.sh"

PIPELINE_NAMES = {"twitter_pairs", "bitext_pairs", "paranmt_pairs"}

# Values the flex template parameters must accept or reject (by parameter name).
PARAMETER_EXAMPLES: dict[str, tuple[list[str], list[str]]] = {
    "input": (
        [
            "gs://p-corpusforge-raw/twitter/archiveteam/2021/01/twitter-stream-2021-01-*.zip",
            "gs://p-corpusforge-raw/twitter/archiveteam/202[0-2]/**",
            "s3://bucket/twitter/2019/06/twitter_stream_2019_06_01.tar",
        ],
        ["/local/archives/*.zip", "gs://a/1.zip,gs://a/2.zip", "", "http://example.org/x.tar"],
    ),
    "out": (
        ["gs://p-corpusforge-release/twitter_pairs/en-2021-01", "s3://bucket/release/tp"],
        ["release/twitter_pairs", "gs://bucket/release/*", ""],
    ),
    "lang": (["en", "de", "yue"], ["EN", "english", "en-US", ""]),
    "clean": (["paper", "ct"], ["Paper", "paper mode", ""]),
    "min_chars": (["20", "0"], ["-1", "twenty", ""]),
    "seed": (["0", "42", "20240101"], ["-1", "1.5", "seed", ""]),
    "rows_per_shard": (["250000", "1"], ["0", "-5", ""]),
    "max_line_bytes": (["1048576", "1024"], ["1e6", "-1", ""]),
    "max_member_bytes": (["4294967296", "1048576"], ["4G", ""]),
    "max_member_ratio": (["100", "0", "12.5"], ["1e3", "-1", "ten", ""]),
}


# --------------------------------------------------------------------------- helpers


def _files(*suffixes: str) -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.is_file() and p.suffix in suffixes)


def _load_yaml_documents(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def _schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / name).read_text())
    return schema


def _schema_errors(instance: Any, schema_name: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(_schema(schema_name))
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"
        for error in sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    ]


def _apply_sh_variables() -> set[str]:
    """The ${VAR} names deploy/flink/apply.sh hands to envsubst."""
    match = re.search(r"^subst_vars='([^']*)'", APPLY_SH.read_text(), re.M)
    assert match, "apply.sh must define subst_vars='${A} ${B}' for envsubst"
    return set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)\}", match.group(1)))


def _placeholders(text: str) -> set[str]:
    return set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", text))


def _render(path: Path) -> str:
    """Render a Flink manifest the way apply.sh does, with sample values."""
    samples = {
        "CORPUSFORGE_SDK_IMAGE": "us-central1-docker.pkg.dev/p/corpusforge/corpusforge:test",
        "CORPUSFORGE_JOB_SERVER_IMAGE": JOB_SERVER_IMAGE_SAMPLE,
        "BEAM_ARTIFACTS_DIR": "gs://p-corpusforge-work/flink/beam-artifacts",
    }
    variables = _apply_sh_variables()
    missing = variables - samples.keys()
    assert not missing, f"add sample values for {sorted(missing)} to _render()"
    return string.Template(path.read_text()).safe_substitute(
        {k: v for k, v in samples.items() if k in variables}
    )


def _flinkdeployment() -> dict[str, Any]:
    (doc,) = yaml.safe_load_all(_render(FLINKDEPLOYMENT))
    assert isinstance(doc, dict)
    return doc


def _jobserver_docs() -> dict[str, dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(_render(JOBSERVER)) if d is not None]
    return {d["kind"]: d for d in docs}


def _sidecar(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["taskManager"]["podTemplate"]["spec"]["containers"]
    pools = [c for c in containers if "--worker_pool" in c.get("args", [])]
    assert len(pools) == 1, f"expected one --worker_pool sidecar, found {len(pools)}"
    sidecar: dict[str, Any] = pools[0]
    return sidecar


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _beam_requirement() -> Requirement:
    deps = [Requirement(d) for d in _pyproject()["project"]["dependencies"]]
    (beam,) = [r for r in deps if r.name == "apache-beam"]
    return beam


def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with line continuations joined and comments dropped."""
    logical: list[str] = []
    buffer = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not buffer and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            buffer += line[:-1] + " "
            continue
        logical.append(buffer + line)
        buffer = ""
    out = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    return out


def _dockerfile_resolved() -> list[tuple[str, str]]:
    """Instructions with ${VAR} replaced by ARG defaults and ENV values seen so far."""
    env: dict[str, str] = {}
    resolved = []
    for keyword, rest in _dockerfile_instructions():
        rest = string.Template(rest).safe_substitute(env)
        if keyword in {"ARG", "ENV"}:
            name, sep, value = rest.partition("=")
            if sep:
                env[name.strip()] = value.strip().strip('"')
        resolved.append((keyword, rest))
    return resolved


def _from_images() -> list[str]:
    return [rest.split()[0] for keyword, rest in _dockerfile_resolved() if keyword == "FROM"]


def _beam_sdk_image() -> tuple[str, str]:
    """(python version, beam version) of the apache/beam_pythonX.Y_sdk base image."""
    images = [
        m.groups()
        for image in _from_images()
        if (m := re.fullmatch(r"apache/beam_python(\d+\.\d+)_sdk:(\S+)", image))
    ]
    assert len(images) == 1, f"expected one apache/beam_pythonX.Y_sdk base, got {_from_images()}"
    python, beam = images[0]
    return python, beam


def _copy_sources() -> list[str]:
    sources = []
    for keyword, rest in _dockerfile_resolved():
        if keyword != "COPY" or rest.startswith("--from"):
            continue
        parts = rest.split()
        sources.extend(p.rstrip("/") for p in parts[:-1] if not p.startswith("--"))
    return sources


def _bash_arrays(text: str, name: str) -> list[str]:
    """Bodies of every `name=( ... )` and `name+=( ... )` in a bash script, comments removed."""
    bodies = []
    for match in re.finditer(rf"\b{re.escape(name)}\+?=\(", text):
        depth, i = 1, match.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        body = text[match.end() : i - 1]
        bodies.append("\n".join(ln for ln in body.splitlines() if not ln.strip().startswith("#")))
    assert bodies, f"no {name}=(...) array found"
    return bodies


def _snake_flags(text: str) -> set[str]:
    """Beam-style --snake_case flag names (kebab-case gcloud flags are left out)."""
    return set(re.findall(r"(?<![\w-])--([a-z][a-z0-9_]*)(?![a-z0-9_-])", text))


def _command_blocks(text: str, command: str) -> Iterator[str]:
    """Each occurrence of `command` with its backslash-continued lines."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"\s*(exec\s+)?{re.escape(command)}\b", line):
            block = [line]
            while block[-1].rstrip().endswith("\\") and i + len(block) < len(lines):
                block.append(lines[i + len(block)])
            yield "\n".join(block)


def _case_pipelines(script: Path) -> set[str]:
    """Pipeline names a script's `case` accepts (the twitter_pairs|...) pattern."""
    found = re.findall(r"^\s*(twitter_pairs\|[a-z_|]+)\)", script.read_text(), re.M)
    assert found, f"{script.name} has no case over the pipeline names"
    return {name for pattern in found for name in pattern.split("|")}


@cache
def _beam_option_flags() -> frozenset[str]:
    """Every --flag the standard apache_beam PipelineOptions classes define."""
    from apache_beam.options import pipeline_options as po

    flags: set[str] = set()
    for cls in po.PipelineOptions.__subclasses__():
        if not cls.__module__.startswith("apache_beam."):
            continue
        parser = po._BeamArgumentParser(allow_abbrev=False)
        cls._add_argparse_args(parser)
        flags.update(s[2:] for a in parser._actions for s in a.option_strings if s[:2] == "--")
    return frozenset(flags)


def _metadata() -> dict[str, Any]:
    metadata: dict[str, Any] = json.loads(METADATA.read_text())
    return metadata


def _metadata_names() -> set[str]:
    return {p["name"] for p in _metadata()["parameters"]}


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("path", _files(".yaml", ".yml"), ids=lambda p: str(p.relative_to(DEPLOY)))
def test_yaml_file_parses_into_mappings(path: Path) -> None:
    docs = _load_yaml_documents(path)
    assert docs, f"{path} has no YAML document"
    assert all(isinstance(d, dict) for d in docs), f"{path}: every document must be a mapping"


@pytest.mark.parametrize("path", _files(".json"), ids=lambda p: str(p.relative_to(DEPLOY)))
def test_json_file_parses_into_an_object(path: Path) -> None:
    assert isinstance(json.loads(path.read_text()), dict)


def test_deploy_holds_the_files_the_runbooks_describe() -> None:
    expected = [DOCKERFILE, METADATA, FLEX_MAIN, BUILD_SH, LAUNCH_SH, FLINKDEPLOYMENT, JOBSERVER]
    expected += [APPLY_SH, SUBMIT_SH, DATAFLOW / "cloudbuild.yaml", DATAFLOW / "gcloudignore"]
    expected += [DEPLOY / "README.md", DATAFLOW / "RUNBOOK.md", FLINK / "RUNBOOK.md"]
    assert [p.relative_to(REPO) for p in expected if not p.is_file()] == []


@pytest.mark.parametrize("path", sorted(SCHEMAS.glob("*.json")), ids=lambda p: p.name)
def test_schema_is_a_valid_draft_2020_12_schema(path: Path) -> None:
    jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))


# --------------------------------------------------------------------------- Flink


def test_flink_manifests_use_exactly_the_variables_apply_sh_substitutes() -> None:
    used = _placeholders(FLINKDEPLOYMENT.read_text()) | _placeholders(JOBSERVER.read_text())
    assert used == _apply_sh_variables()
    listed = re.search(r"^manifests=\(([^)]*)\)", APPLY_SH.read_text(), re.M)
    assert listed, "apply.sh must list the manifests it applies in manifests=(...)"
    assert set(re.findall(r"\$here/([\w.-]+\.yaml)", listed.group(1))) == {
        FLINKDEPLOYMENT.name,
        JOBSERVER.name,
    }


def test_the_runbooks_deploy_step_exports_every_variable_apply_sh_requires() -> None:
    """A user who runs section 3 as written gets past apply.sh's checks (it once left out
    ``CORPUSFORGE_JOB_SERVER_IMAGE``, which apply.sh refuses to go without)."""
    runbook = (FLINK / "RUNBOOK.md").read_text()
    step = runbook.split("## 3. Deploy", 1)[1].split("\n## ", 1)[0]
    exported = set(re.findall(r"^export ([A-Z_][A-Z0-9_]*)=", step, re.M))
    assert _apply_sh_variables() - exported == set()


def test_flinkdeployment_matches_schema() -> None:
    assert _schema_errors(_flinkdeployment(), "flinkdeployment.schema.json") == []


def test_flinkdeployment_schema_rejects_what_the_operator_or_beam_would() -> None:
    good = _flinkdeployment()
    assert _schema_errors(good, "flinkdeployment.schema.json") == []

    def broken(edit: Any) -> list[str]:
        doc = json.loads(json.dumps(good))
        edit(doc)
        return _schema_errors(doc, "flinkdeployment.schema.json")

    def unquoted_slots(d: dict[str, Any]) -> None:
        d["spec"]["flinkConfiguration"]["taskmanager.numberOfTaskSlots"] = 4

    assert broken(lambda d: d["spec"].update(flinkVersion="v1_21"))
    assert broken(unquoted_slots)
    assert broken(lambda d: d["spec"].update(job={"jarURI": "local:///x.jar"}))
    assert broken(lambda d: _sidecar(d)["ports"][0].update(containerPort=50001))
    assert broken(lambda d: _sidecar(d).update(args=["--worker-pool"]))
    assert broken(lambda d: d["spec"].update(flinkConfigration={}))


def _flink_minor() -> str:
    version = re.fullmatch(r"v(\d+)_(\d+)", _flinkdeployment()["spec"]["flinkVersion"])
    assert version, "flinkVersion must look like v1_20"
    return ".".join(version.groups())


def _pom_property(pom: str, name: str) -> str:
    found = re.search(rf"<{name}>([^<]+)</{name}>", (REPO / "tools" / "flink" / pom).read_text())
    assert found, f"tools/flink/{pom} has no <{name}>"
    return found.group(1)


def test_flink_images_are_the_versions_that_ran_here() -> None:
    """Flink 1.19.0, as tools/flink/cluster/pom.xml pins the cluster tests/flink runs; the
    job server is the image of deploy/flink/jobserver/Dockerfile: the jar scripts/flink.sh
    builds from Beam's 2.70 Flink 1.19 runner, with the Java 17 flags."""
    from corpusforge.flink import FLINK_VERSION, JAVA_17_FLAGS

    spec = _flinkdeployment()["spec"]
    flink = _flink_minor()
    assert flink == FLINK_VERSION
    patch = _pom_property("cluster/pom.xml", "flink.version")
    assert spec["image"] == f"flink:{patch}-scala_2.12-java17"
    assert _pom_property("job-server/pom.xml", "beam.version").startswith("2.70.")
    config = spec["flinkConfiguration"]
    assert config["env.java.opts.all"].split() == list(JAVA_17_FLAGS)

    (container,) = _jobserver_docs()["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == JOB_SERVER_IMAGE_SAMPLE
    dockerfile = (FLINK / "jobserver" / "Dockerfile").read_text()
    assert "COPY build/flink/beam-flink-job-server.jar " in dockerfile
    entry = re.search(r"^ENTRYPOINT (\[.*?\])$", dockerfile.replace("\\\n", ""), re.M | re.S)
    assert entry, "the Dockerfile needs an exec-form ENTRYPOINT"
    java, *flags, jar_flag, jar = json.loads(entry.group(1))
    assert (java, flags, jar_flag) == ("java", list(JAVA_17_FLAGS), "-jar")
    assert jar.endswith("/beam-flink-job-server.jar")


def test_the_local_cluster_gets_the_java_17_flags_the_deployment_gets() -> None:
    """scripts/flink-cluster.sh's JVMs (the cluster tests/flink runs) take the same module
    flags as the job server and the FlinkDeployment, in any order."""
    from corpusforge.flink import JAVA_17_FLAGS

    script = (REPO / "scripts" / "flink-cluster.sh").read_text()
    block = re.search(r"^java_opens=\((.*?)^\)", script, re.M | re.S)
    assert block, "flink-cluster.sh must list its Java flags in java_opens=(...)"
    assert sorted(block.group(1).split()) == sorted(JAVA_17_FLAGS)


def test_job_server_talks_to_the_flinkdeployment_rest_service() -> None:
    name = _flinkdeployment()["metadata"]["name"]
    docs = _jobserver_docs()
    (container,) = docs["Deployment"]["spec"]["template"]["spec"]["containers"]
    args = dict(a.split("=", 1) for a in container["args"])
    assert args["--flink-master"] == f"{name}-rest:8081"
    assert args["--artifacts-dir"].startswith(("gs://", "s3://"))

    selector = docs["Deployment"]["spec"]["selector"]["matchLabels"]
    assert docs["Service"]["spec"]["selector"] == selector
    labels = docs["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert selector.items() <= labels.items()
    service_ports = {p["name"]: p["port"] for p in docs["Service"]["spec"]["ports"]}
    assert service_ports["job"] == int(args["--job-port"])
    assert service_ports["artifact"] == int(args["--artifact-port"])

    submit = SUBMIT_SH.read_text()
    assert f"JOB_ENDPOINT:-localhost:{service_ports['job']}" in submit
    assert f"ARTIFACT_ENDPOINT:-localhost:{service_ports['artifact']}" in submit


def test_submit_uses_the_external_worker_pool_of_the_sidecar() -> None:
    (body,) = _bash_arrays(SUBMIT_SH.read_text(), "runner_args")
    options = dict(re.findall(r"--([a-z_]+)=(\S+)", body))
    assert options["runner"] == "PortableRunner"
    assert options["environment_type"] == "EXTERNAL"
    host, port = options["environment_config"].split(":")
    assert host == "localhost", "the sidecar shares the TaskManager pod's network namespace"
    ports = [p["containerPort"] for p in _sidecar(_flinkdeployment())["ports"]]
    assert int(port) in ports


SENT_OPTIONS = """
import sys
from apache_beam.runners.portability.portable_runner import JobServiceHandle
from corpusforge.config.beam import TwitterPairsOptions, pipeline_options
_, runner = TwitterPairsOptions.split(sys.argv[1:])
sent = JobServiceHandle.encode_pipeline_options(pipeline_options(runner).get_all_options())
print(sent.fields["beam:option:cancel_job_with_client:v1"].bool_value)
"""
"""What ``python -m pipelines.twitter_pairs`` sends the job server, in a fresh process: Beam
learns of corpusforge's own options only once they are declared, which a test run has done."""


def _submitted_flags() -> list[str]:
    """``submit.sh``'s runner flags, each variable given its default (or a name)."""
    text = SUBMIT_SH.read_text()
    defaults = dict(re.findall(r"^([A-Z_]+)=\$\{\1:-([^}]*)\}$", text, re.M))
    (body,) = _bash_arrays(text, "runner_args")
    flags = []
    for word in body.split():
        name, has_value, value = word.partition("=")
        value = re.sub(r'"\$(\w+)"', lambda m: defaults.get(m[1], "corpusforge-test"), value)
        flags.append(f"{name}={value}" if has_value else name)
    return flags


def test_submit_asks_the_job_server_to_cancel_the_job_when_the_driver_dies() -> None:
    """The driver publishes the release after its jobs: a job it no longer watches could never
    be published, so submit.sh passes ``--cancel_job_with_client`` (RUNBOOK.md, section 0),
    and the pipeline entry point must send it to the job server, not drop it as unparseable."""
    flags = _submitted_flags()
    assert "--cancel_job_with_client" in flags
    argv = ["--input=gs://b/day.zip", "--out=gs://b/release", *flags]
    result = subprocess.run(
        [sys.executable, "-c", SENT_OPTIONS, *argv], capture_output=True, text=True, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    assert "unparseable" not in result.stderr, result.stderr
    assert result.stdout.splitlines()[-1] == "True"


def test_parallelism_defaults_match_the_cluster_shape() -> None:
    spec = _flinkdeployment()["spec"]
    config = spec["flinkConfiguration"]
    slots = int(config["taskmanager.numberOfTaskSlots"])
    default = int(config["parallelism.default"])
    ceiling = int(config["slotmanager.number-of-slots.max"])
    assert default % slots == 0 and ceiling % slots == 0, "whole TaskManagers only"
    assert default <= ceiling
    submit = SUBMIT_SH.read_text()
    assert f"PARALLELISM=${{PARALLELISM:-{default}}}" in submit
    assert f"SDK_WORKER_PARALLELISM=${{SDK_WORKER_PARALLELISM:-{slots}}}" in submit
    cpu = _sidecar(_flinkdeployment())["resources"]["requests"]["cpu"]
    assert float(cpu) == slots, "one sidecar CPU per slot, one SDK worker per slot"


# --------------------------------------------------------------------------- images


def test_dockerfile_pins_beam_and_python_to_pyproject() -> None:
    python, beam = _beam_sdk_image()
    assert re.fullmatch(r"\d+\.\d+\.\d+", beam), f"pin an exact Beam release, not {beam}"
    beam_spec = _beam_requirement().specifier
    assert beam_spec.contains(beam), f"image Beam {beam} outside pyproject's {beam_spec}"
    requires_python = SpecifierSet(_pyproject()["project"]["requires-python"])
    assert requires_python.contains(python), f"Python {python} outside {requires_python}"

    launchers = [i for i in _from_images() if "template-launcher-base" in i]
    assert len(launchers) == 1, _from_images()
    assert f"/python{python.replace('.', '')}-template-launcher-base" in launchers[0]

    text = DOCKERFILE.read_text()
    assert f"apache_beam.__version__ == '{beam}'" in text
    assert f"sys.version_info[:2] == ({python.replace('.', ', ')})" in text


def test_submitting_scripts_require_the_image_versions() -> None:
    python, beam = _beam_sdk_image()
    for script in (SUBMIT_SH, LAUNCH_SH):
        text = script.read_text()
        assert f'apache_beam.__version__ != "{beam}"' in text, script.name
        assert f"sys.version_info[:2] != ({python.replace('.', ', ')})" in text, script.name


def test_dockerfile_copies_what_the_wheel_build_needs() -> None:
    project = _pyproject()
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    needed = {"pyproject.toml", project["project"]["readme"]}
    needed |= {Path(p).parts[0] for p in wheel["packages"]}
    needed |= {Path(p).parts[0] for p in wheel.get("force-include", {})}
    copied = set(_copy_sources())
    assert needed <= copied, f"Dockerfile does not COPY {sorted(needed - copied)}"

    ignored = {
        line.strip().rstrip("/")
        for line in (DATAFLOW / "gcloudignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert copied.isdisjoint(ignored), f"gcloudignore drops {sorted(copied & ignored)}"


def test_flex_template_entry_point_is_in_the_image() -> None:
    resolved = _dockerfile_resolved()
    env = dict(r.split("=", 1) for k, r in resolved if k == "ENV")
    workdirs = [r for k, r in resolved if k == "WORKDIR"]
    py_file = env["FLEX_TEMPLATE_PYTHON_PY_FILE"]
    relative = FLEX_MAIN.relative_to(REPO).as_posix()
    assert py_file == f"{workdirs[-1]}/{relative}"
    assert any(relative == src or relative.startswith(f"{src}/") for src in _copy_sources())
    assert env["CORPUSFORGE_PIPELINE"].removeprefix("pipelines.") in PIPELINE_NAMES
    entrypoints = [r for k, r in resolved if k == "ENTRYPOINT"]
    assert entrypoints[-1] == '["/opt/apache/beam/boot"]', "workers start via the Beam boot"


def _flex_main_module() -> Any:
    spec = importlib.util.spec_from_file_location("flex_main_under_test", FLEX_MAIN)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_flex_main_runs_the_configured_module_like_python_dash_m(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    flex_main = _flex_main_module()
    calls: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(flex_main.runpy, "run_module", lambda m, **kw: calls.append((m, kw)))
    single = sorted(flex_main.PIPELINES - flex_main.MULTI_JOB_DRIVERS)
    assert single, "no pipeline can be launched as a Flex Template"
    monkeypatch.setenv("CORPUSFORGE_PIPELINE", single[0])
    flex_main.main()
    assert calls == [(single[0], {"run_name": "__main__", "alter_sys": True})]


@pytest.mark.parametrize("module", ["pipelines.twitter_pairs", "pipelines.nope", "os"])
def test_flex_main_refuses_drivers_and_unknown_modules(
    monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    flex_main = _flex_main_module()

    def must_not_run(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("flex_main ran a module it should have refused")

    monkeypatch.setattr(flex_main.runpy, "run_module", must_not_run)
    monkeypatch.setenv("CORPUSFORGE_PIPELINE", module)
    with pytest.raises(SystemExit) as exit_info:
        flex_main.main()
    assert module in str(exit_info.value.code)


def test_multi_job_drivers_get_no_template_anywhere() -> None:
    drivers = {m.removeprefix("pipelines.") for m in _flex_main_module().MULTI_JOB_DRIVERS}
    listed = re.search(r'^multi_job_drivers="([^"]*)"', BUILD_SH.read_text(), re.M)
    assert listed, "build.sh must list multi_job_drivers"
    assert set(listed.group(1).split()) == drivers
    refused = set(re.findall(r'"\$PIPELINE" == ([a-z_]+) \]\]', LAUNCH_SH.read_text()))
    assert refused == drivers


def test_pipeline_names_agree_across_deploy_files() -> None:
    tree = ast.parse(FLEX_MAIN.read_text())
    (literal,) = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "PIPELINES" for t in node.targets)
    ]
    assert isinstance(literal, ast.Call), "PIPELINES = frozenset({...})"
    flex = {s.removeprefix("pipelines.") for s in ast.literal_eval(literal.args[0])}
    assert flex == PIPELINE_NAMES
    for script in (SUBMIT_SH, BUILD_SH, LAUNCH_SH):
        assert _case_pipelines(script) == PIPELINE_NAMES, script.name


def test_pipeline_module_of_the_template_exists() -> None:
    module = REPO / "pipelines" / "twitter_pairs.py"
    if not module.is_file():
        pytest.skip("pipelines/twitter_pairs.py is not written yet")
    tree = ast.parse(module.read_text())
    assert any(isinstance(n, ast.FunctionDef) and n.name == "run" for n in tree.body), (
        "pipelines/twitter_pairs.py must define run(argv=None)"
    )
    assert "__main__" in module.read_text(), "flex_main.py runs it as __main__, like python -m"


def test_cloud_build_recipe_matches_dockerfile_and_build_sh() -> None:
    recipe = yaml.safe_load((DATAFLOW / "cloudbuild.yaml").read_text())
    (step,) = recipe["steps"]
    args = step["args"]
    assert f"--file={DOCKERFILE.relative_to(REPO).as_posix()}" in args
    assert args[-1] == ".", "the build context is the repository root"
    assert "${_IMAGE}" in recipe["images"]
    assert "--tag=${_IMAGE}" in args

    build_args = {a.split("=", 2)[1] for a in args if a.startswith("--build-arg=")}
    dockerfile_args = {r.split("=")[0] for k, r in _dockerfile_instructions() if k == "ARG"}
    assert build_args <= dockerfile_args

    build_sh = BUILD_SH.read_text()
    assert "--config deploy/dataflow/cloudbuild.yaml" in build_sh
    assert "--ignore-file deploy/dataflow/gcloudignore" in build_sh
    substitutions = re.search(r'--substitutions "([^"]+)"', build_sh)
    assert substitutions, "build.sh must pass --substitutions to gcloud builds submit"
    passed = set(re.findall(r"(_[A-Z_]+)=", substitutions.group(1)))
    assert passed and passed <= set(recipe["substitutions"]), passed


# --------------------------------------------------------------------------- template


def test_flex_template_metadata_matches_google_schema() -> None:
    assert _schema_errors(_metadata(), "flex_template_metadata.schema.json") == []


def test_flex_template_metadata_schema_rejects_misspelt_fields() -> None:
    for edit in (
        {"isoptional": True},
        {"paramType": "GCS_FOLDER"},
        {"regexes": "^x$"},
        {"paramType": "ENUM"},
    ):
        doc = _metadata()
        doc["parameters"][0].update(edit)
        assert _schema_errors(doc, "flex_template_metadata.schema.json"), edit


def test_flex_template_parameters_are_unique_and_documented() -> None:
    names = [p["name"] for p in _metadata()["parameters"]]
    assert len(names) == len(set(names))
    assert {"input", "out"} <= set(names)
    required = {p["name"] for p in _metadata()["parameters"] if not p.get("isOptional")}
    assert required == {"input", "out"}


@pytest.mark.parametrize("name", sorted(PARAMETER_EXAMPLES))
def test_flex_template_regexes_accept_and_reject_examples(name: str) -> None:
    (param,) = [p for p in _metadata()["parameters"] if p["name"] == name]
    patterns = [re.compile(r) for r in param.get("regexes", [])]
    assert patterns, f"{name} has no validation regex"
    good, bad = PARAMETER_EXAMPLES[name]
    for value in good:
        assert all(p.fullmatch(value) for p in patterns), (name, value)
    for value in bad:
        assert not all(p.fullmatch(value) for p in patterns), (name, value)


def _twitter_pairs_options() -> type:
    try:
        module = importlib.import_module("pipelines.twitter_pairs")
    except ImportError as err:
        pytest.skip(f"pipelines.twitter_pairs is not importable yet ({err}); written by the lead")
    options = getattr(module, "TwitterPairsOptions", None)
    if options is None:
        options = importlib.import_module("corpusforge.config.beam").TwitterPairsOptions
    assert isinstance(options, type)
    return options


def test_flex_template_parameters_are_twitter_pairs_options() -> None:
    from apache_beam.options.pipeline_options import PipelineOptions, _BeamArgumentParser

    options_cls = _twitter_pairs_options()
    assert issubclass(options_cls, PipelineOptions)
    parser = _BeamArgumentParser(allow_abbrev=False)
    options_cls._add_argparse_args(parser)
    actions = {s[2:]: a for a in parser._actions for s in a.option_strings if s[:2] == "--"}

    params = _metadata()["parameters"]
    unknown = sorted(p["name"] for p in params if p["name"] not in actions)
    assert unknown == [], f"not TwitterPairsOptions flags: {unknown}"

    for param in params:
        action = actions[param["name"]]
        patterns = [re.compile(r) for r in param.get("regexes", [])]
        for choice in action.choices or []:
            assert all(p.fullmatch(str(choice)) for p in patterns), (param["name"], choice)
        if param.get("paramType") == "ENUM":
            offered = {o["value"] for o in param["enumOptions"]}
            assert offered == {str(c) for c in action.choices or []}, param["name"]
        default = action.default
        if default is not None and not isinstance(default, list | tuple | bool):
            assert all(p.fullmatch(str(default)) for p in patterns), (param["name"], default)
        if action.required:
            assert not param.get("isOptional"), f"{param['name']} is required by the pipeline"

    # What the launcher passes: --name=value for every parameter, and the options parse it.
    flags = [f"--{name}={PARAMETER_EXAMPLES[name][0][0]}" for name in sorted(_metadata_names())]
    values = options_cls(flags).get_all_options(current_only=True)
    for param in params:
        dest = actions[param["name"]].dest
        assert values.get(dest) not in (None, []), (param["name"], values.get(dest))


def test_launch_parameters_are_template_parameters_or_beam_options() -> None:
    text = LAUNCH_SH.read_text()
    keys = set(re.findall(r'--parameters "([a-z_]+)=', text))
    assert {"input", "out", "sdk_container_image"} <= keys
    unknown = keys - _metadata_names() - _beam_option_flags()
    assert unknown == set(), unknown


# --------------------------------------------------------------------------- scripts


@pytest.mark.parametrize("path", sorted(DEPLOY.rglob("*.sh")), ids=lambda p: p.name)
def test_shell_script_is_strict_executable_bash(path: Path) -> None:
    text = path.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    assert re.search(r"^set -euo pipefail$", text, re.M), "missing set -euo pipefail"
    assert path.stat().st_mode & stat.S_IXUSR, f"chmod +x {path.relative_to(REPO)}"
    result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("script", "arrays"),
    [(SUBMIT_SH, ["runner_args"]), (LAUNCH_SH, ["dataflow_args"])],
    ids=["submit.sh", "launch.sh"],
)
def test_scripts_pass_only_real_beam_options(script: Path, arrays: list[str]) -> None:
    text = script.read_text()
    flags = {f for name in arrays for body in _bash_arrays(text, name) for f in _snake_flags(body)}
    assert flags, script.name
    known = _beam_option_flags() | (_flink_option_flags() if script == SUBMIT_SH else set())
    assert sorted(flags - known) == []


def _flink_option_flags() -> set[str]:
    """The flags corpusforge declares for its Flink job server (``corpusforge.flink``)."""
    from apache_beam.options import pipeline_options as po

    from corpusforge import flink

    parser = po._BeamArgumentParser(allow_abbrev=False)
    for options in (flink.stall_options(), flink.batch_options()):
        options._add_argparse_args(parser)
    return {s[2:] for a in parser._actions for s in a.option_strings if s[:2] == "--"}


def test_direct_launch_passes_pipeline_flags_the_template_declares() -> None:
    (line,) = [ln for ln in LAUNCH_SH.read_text().splitlines() if '-m "pipelines.$PIPELINE"' in ln]
    flags = _snake_flags(line)
    assert {"input", "out"} <= flags
    assert flags <= _metadata_names() | _beam_option_flags()


GCLOUD_COMMANDS = [
    (LAUNCH_SH, "gcloud dataflow flex-template run", ("gcloud_args",)),
    (LAUNCH_SH, "gcloud run jobs deploy", ("run_args",)),
    (BUILD_SH, "gcloud dataflow flex-template build", ("metadata_args",)),
    (BUILD_SH, "gcloud builds submit", ()),
]


@pytest.mark.slow  # gcloud's own --help takes seconds per command
@pytest.mark.parametrize(
    ("script", "command", "arrays"), GCLOUD_COMMANDS, ids=[c[1] for c in GCLOUD_COMMANDS]
)
def test_gcloud_flags_exist(script: Path, command: str, arrays: tuple[str, ...]) -> None:
    gcloud = shutil.which("gcloud")
    if gcloud is None:
        pytest.skip("gcloud is not installed; its --help is the reference for flag names")
    text = script.read_text()
    blocks = list(_command_blocks(text, command))
    assert blocks, f"{command} not found in {script.name}"
    blocks += [body for name in arrays for body in _bash_arrays(text, name)]
    flags = {f for b in blocks for f in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", b)}
    result = subprocess.run(
        [gcloud, *command.split()[1:], "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "TERM": "dumb", "CLOUDSDK_CORE_DISABLE_PROMPTS": "1"},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    help_text = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
    missing = [f for f in flags if not re.search(rf"{f}(?![a-z0-9-])", help_text)]
    assert sorted(missing) == []


# --------------------------------------------------------------------------- docs


def test_docs_and_scripts_name_the_pinned_versions() -> None:
    python, beam = _beam_sdk_image()
    flink = _flink_minor()
    minor = ".".join(beam.split(".")[:2])
    texts = {
        p.relative_to(REPO): p.read_text()
        for p in DEPLOY.rglob("*")
        if p.is_file() and (p.suffix in {".md", ".sh", ".yaml", ".py"} or p.name == "Dockerfile")
    }
    wrong = []
    for path, text in texts.items():
        for m in re.finditer(r"apache/beam_python(\d+\.\d+)_sdk:([\w.]+)", text):
            wrong += [(path, m.group(0))] if m.groups() != (python, beam) else []
        for m in re.finditer(r"apache/beam_flink(\d+\.\d+)_job_server:([\w.]+)", text):
            wrong += [(path, m.group(0))] if m.groups() != (flink, beam) else []
        for m in re.finditer(r"apache-beam(?:\[\w+\])?==(\d+\.\d+)", text):
            wrong += [(path, m.group(0))] if m.group(1) != minor else []
        for m in re.finditer(r"\bflink:(\d+\.\d+)\.", text):
            wrong += [(path, m.group(0))] if m.group(1) != flink else []
    assert wrong == []


@pytest.mark.parametrize(
    "path", sorted(DEPLOY.rglob("*.md")), ids=lambda p: str(p.relative_to(DEPLOY))
)
def test_markdown_links_resolve(path: Path) -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text())
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    missing = [link for link in local if not (path.parent / link).exists()]
    assert missing == []
