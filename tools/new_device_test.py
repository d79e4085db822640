"""tools/new_device.py: the name rules, the one registration line, the files it writes."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import new_device  # noqa: E402  pylint: disable=g-import-not-at-top

_BZL = '"""Registered devices."""\n\nDEVICES = [\n    "xla_cpu",\n    "xla_gpu",\n]\n'


@pytest.fixture
def root(tmp_path: Path) -> Path:
  registry = tmp_path / "xla_plugin" / "devices" / "registry"
  registry.mkdir(parents=True)
  (registry / "devices.bzl").write_text(_BZL, encoding="utf-8")
  (tmp_path / "xla_plugin" / "devices" / "xla_cpu").mkdir()
  return tmp_path


def test_own_runtime_starting_point_is_the_default(root: Path):
  written = new_device.write_device("acme_npu", root)
  folder = root / "xla_plugin" / "devices" / "acme_npu"
  assert [p.relative_to(root).as_posix() for p in written] == [
      "xla_plugin/devices/acme_npu/" + f for f in (
          "BUILD", "README.md", "acme_npu_factory.h", "acme_npu_factory.cc", "entry.h",
          "entry.cc", "acme_npu_device_test.cc", "acme_npu_jax_test.py")] + [
              "xla_plugin/devices/registry/devices.bzl"]
  factory = (folder / "acme_npu_factory.cc").read_text(encoding="utf-8")
  assert "sim::SimFactory::CreateClientWith(options, job, kKind, kBackend)" in factory
  assert 'constexpr char kKind[] = "acme_npu";' in factory
  entry = (folder / "entry.cc").read_text(encoding="utf-8")
  assert "facts.runs_like = registry::kRunsLikeStablehlo;" in entry
  assert "inner_plugin" not in entry
  for path in folder.iterdir():
    assert "@" + "NAME@" not in path.read_text(encoding="utf-8"), path


def test_an_unknown_starting_point_is_refused(root: Path):
  with pytest.raises(ValueError) as refused:
    new_device.write_device("acme", root, "tpu")
  assert str(refused.value) == "--from must be one of sim, xla_cpu, got 'tpu'"


def test_writes_the_folder_and_one_registration_line(root: Path):
  written = new_device.write_device("acme_npu", root, "xla_cpu")
  folder = root / "xla_plugin" / "devices" / "acme_npu"
  assert [p.relative_to(root).as_posix() for p in written] == [
      "xla_plugin/devices/acme_npu/" + f for f in (
          "BUILD", "README.md", "acme_npu_factory.h", "acme_npu_factory.cc", "entry.h", "entry.cc",
          "acme_npu_device_test.cc", "acme_npu_jax_test.py", "acme_npu_policy.h",
          "acme_npu_policy.cc")] + ["xla_plugin/devices/registry/devices.bzl"]
  assert (root / "xla_plugin/devices/registry/devices.bzl").read_text(encoding="utf-8") == (
      _BZL.replace('    "xla_gpu",\n', '    "xla_gpu",\n    "acme_npu",\n'))
  policy = (folder / "acme_npu_policy.h").read_text(encoding="utf-8")
  assert "class AcmeNpuPolicy : public xla_cpu::XlaCpuPolicy" in policy
  assert "PJRTKIT_XLA_PLUGIN_DEVICES_ACME_NPU_ACME_NPU_POLICY_H_" in policy
  for path in folder.iterdir():
    assert "@" + "NAME@" not in path.read_text(encoding="utf-8"), path


@pytest.mark.parametrize("name,message", [
    ("Acme", "NAME must match [a-z][a-z0-9_]{1,30} (lower case, digits, '_'; 2-31 characters, a "
             "letter first), got 'Acme'"),
    ("a", "NAME must match [a-z][a-z0-9_]{1,30} (lower case, digits, '_'; 2-31 characters, a "
          "letter first), got 'a'"),
    ("auto", "NAME 'auto' is reserved (reserved: auto, cpu, cuda, gpu, host, pjrtkit, "
             "plugin_wrapper, registry, rocm, selection, stablehlo, template, tpu, and every xla_* "
             "name)"),
    ("xla_tpu", "NAME 'xla_tpu' is reserved (reserved: auto, cpu, cuda, gpu, host, pjrtkit, "
                "plugin_wrapper, registry, rocm, selection, stablehlo, template, tpu, and every "
                "xla_* name)"),
    ("plugin_wrapper", "NAME 'plugin_wrapper' is reserved (reserved: auto, cpu, cuda, gpu, host, "
                       "pjrtkit, plugin_wrapper, registry, rocm, selection, stablehlo, template, "
                       "tpu, and every xla_* name)"),
])
def test_bad_names_are_refused_naming_the_rule(root: Path, name: str, message: str):
  with pytest.raises(ValueError) as refused:
    new_device.write_device(name, root)
  assert str(refused.value) == message
  assert not (root / "xla_plugin" / "devices" / name).exists()


def test_an_existing_folder_or_registration_is_refused(root: Path):
  new_device.write_device("acme", root)
  with pytest.raises(ValueError) as again:
    new_device.write_device("acme", root)
  assert str(again.value) == "xla_plugin/devices/acme exists already"
  shutil.rmtree(root / "xla_plugin" / "devices" / "acme")
  with pytest.raises(ValueError) as registered:
    new_device.register(root / "xla_plugin/devices/registry/devices.bzl", "acme")
  assert "'acme' is registered already" in str(registered.value)


def test_the_repository_registry_has_the_reference_devices_first():
  text = (Path(new_device.REPO) / "xla_plugin/devices/registry/devices.bzl").read_text(
      encoding="utf-8")
  assert 'DEVICES = [\n    "xla_cpu",\n    "xla_gpu",\n' in text


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-v"] + sys.argv[1:]))
