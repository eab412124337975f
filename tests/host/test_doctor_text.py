"""harness/host/doctor_text.py: the doctor's report as text, from typed hosts (no detection, no child
process): the same text `harness doctor` prints for a host without a GPU (tests/host/test_doctor.py
checks it through the CLI on a fake host), and a host's GPU rows aligned with what hides one."""

from __future__ import annotations

from harness.host.doctor import make_report
from harness.host.doctor_text import render_text
from harness.host.facts import Gpu, Host, InstalledTorch

NO_TOOLS = (("nvidia-smi", "not found"), ("rocm_agent_enumerator", "not found"))


def test_a_host_without_a_gpu_reads_as_the_cli_prints_it(golden) -> None:
    report = make_report(Host(tools=NO_TOOLS), InstalledTorch(python="python", state="absent"), python="python")
    golden("doctor_no_gpu.txt", render_text(report))


def test_gpu_rows_are_aligned_and_say_what_hides_a_gpu() -> None:
    gpus = (
        Gpu(vendor="nvidia", index=0, name="NVIDIA H100 80GB HBM3", bus_id="0000:3b:00.0", arch="sm_90",
            arch_source="nvidia-smi", driver="nvidia"),
        Gpu(vendor="nvidia", index=1, name="Tesla P100-PCIE-16GB", arch="sm_60", driver="nvidia", visible=False,
            hidden_by="CUDA_VISIBLE_DEVICES=0"),
    )  # fmt: skip
    host = Host(gpus=gpus, nvidia_driver="580.95.05", nvidia_driver_source="/proc/driver/nvidia/version")
    text = render_text(make_report(host, None, python="python"))
    lines = text.splitlines()
    assert lines[:2] == ["This host", "  NVIDIA driver 580.95.05 (from /proc/driver/nvidia/version)"]
    first, second = lines[2], lines[3]
    assert first.startswith("  nvidia 0  NVIDIA H100 80GB HBM3  sm_90 (nvidia-smi)  0000:3b:00.0")
    assert second.endswith("hidden by CUDA_VISIBLE_DEVICES=0") and "  -  " in second, "no bus id: a dash"
    assert first.index("driver nvidia") == second.index("driver nvidia"), "columns line up"
    assert "Installed torch" not in text, "no interpreter asked: no section"
    assert text.endswith("\n") and "\n\nRecommendation: " in text


def test_doctor_lists_each_releases_pythons_and_says_which_do_not_ship_this_one() -> None:
    from harness.host.doctor import make_report
    from harness.host.doctor_text import render_text
    from harness.host.facts import Host

    report = make_report(Host(), None, python="python3.15", python_version="3.15")
    text = render_text(report)
    assert "  2.15         3.11,3.12,3.13,3.14,3.15,3.14t,3.15t" in text
    assert (
        "  this interpreter, Python 3.15: shipped by 2.15, 2.16; not shipped by 2.12, 2.13, 2.14 "
        "(no wheel for it: a cell on it is 'not shipped')"
    ) in text
    assert report.to_dict()["pythons"]["2.14"] == ["3.10", "3.11", "3.12", "3.13", "3.14", "3.14t"]
    assert make_report(Host(), None, python="python3", python_version="3.14t").python_verdicts()["2.12"] is True
