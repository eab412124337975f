"""Tables that name a GPU from what the host shows: Intel PCI device ids, and NVIDIA names as a fallback.

Data only; harness/host/facts.py looks things up here, harness/host/doctor.py decides what they mean.

Intel: the device ids of each family as the Linux kernel groups them in `include/drm/intel/pciids.h`
(torvalds/linux at 0755a4e3e809610a14befc9ad28d35e2e460da68; the macro named in each comment).

NVIDIA: compute capability from the GPU's *name*, a fallback for hosts without nvidia-smi (the kernel
module's /proc files name the GPU but do not give its capability). The values are NVIDIA's, as its
"CUDA GPU Compute Capability" page lists them (https://developer.nvidia.com/cuda-gpus, the page the CUDA
Programming Guide's section 5.1.1 points to); that page was not re-read from the machine that wrote
this table, so add to it only from that page. nvidia-smi's answer always wins over this table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, kw_only=True)
class IntelFamily:
    key: str  # short name, as torch-xpu-ops names its AOT targets where it has one: pvc, dg2, bmg, ...
    name: str
    ids: frozenset[int]


def _ids(*values: int) -> frozenset[int]:
    return frozenset(values)


def _span(first: int, last: int) -> frozenset[int]:
    return frozenset(range(first, last + 1))


INTEL_FAMILIES: Final[tuple[IntelFamily, ...]] = (
    # INTEL_PVC_IDS
    IntelFamily(
        key="pvc",
        name="Intel Data Center GPU Max (Ponte Vecchio)",
        ids=_ids(0x0B69, 0x0B6E, 0x0BE0, 0x0BE1, 0x0BE5) | _span(0x0BD4, 0x0BDB),
    ),
    # INTEL_DG2_G10_IDS, INTEL_DG2_G11_IDS, INTEL_DG2_G12_IDS
    IntelFamily(
        key="dg2",
        name="Intel Arc A-series (Alchemist, DG2)",
        ids=_span(0x5690, 0x5697) | _span(0x56A0, 0x56A6) | _span(0x56B0, 0x56B3) | _span(0x56BA, 0x56BF),
    ),
    # INTEL_ATS_M_IDS: DG2 silicon as a data-center card
    IntelFamily(key="ats-m", name="Intel Data Center GPU Flex (Arctic Sound-M)", ids=_ids(0x56C0, 0x56C1, 0x56C2)),
    # INTEL_BMG_IDS
    IntelFamily(
        key="bmg",
        name="Intel Arc B-series (Battlemage)",
        ids=_ids(0xE202, 0xE209, 0xE20B, 0xE20C, 0xE20D, 0xE210, 0xE211, 0xE212, 0xE216) | _span(0xE220, 0xE223),
    ),
    # INTEL_MTL_IDS without INTEL_MTL_U_IDS
    IntelFamily(key="mtl", name="Intel Core Ultra graphics (Meteor Lake)", ids=_ids(0x7D55, 0x7D60, 0x7DD5)),
    # INTEL_MTL_U_IDS
    IntelFamily(key="mtl-u", name="Intel Core Ultra graphics (Meteor Lake-U)", ids=_ids(0x7D40, 0x7D45)),
    # INTEL_ARL_H_IDS, INTEL_ARL_U_IDS, INTEL_ARL_S_IDS
    IntelFamily(key="arl-h", name="Intel Core Ultra Series 2 graphics (Arrow Lake-H)", ids=_ids(0x7D51, 0x7DD1)),
    IntelFamily(key="arl-u", name="Intel Core Ultra Series 2 graphics (Arrow Lake-U)", ids=_ids(0x7D41)),
    IntelFamily(key="arl-s", name="Intel Core Ultra Series 2 graphics (Arrow Lake-S)", ids=_ids(0x7D67, 0xB640)),
    # INTEL_LNL_IDS
    IntelFamily(key="lnl", name="Intel Core Ultra Series 2 graphics (Lunar Lake)", ids=_ids(0x6420, 0x64A0, 0x64B0)),
    # INTEL_PTL_IDS
    IntelFamily(
        key="ptl",
        name="Intel Core Ultra Series 3 graphics (Panther Lake)",
        ids=_span(0xB080, 0xB087) | _ids(0xB08F, 0xB090, 0xB0A0, 0xB0B0),
    ),
    # Newer than PyTorch 2.15's list: INTEL_WCL_IDS, INTEL_NVLS_IDS, INTEL_NVLP_IDS, INTEL_CRI_IDS
    IntelFamily(key="wcl", name="Intel graphics (Wildcat Lake)", ids=_ids(0xFD80, 0xFD81)),
    IntelFamily(key="nvl", name="Intel graphics (Nova Lake)", ids=_span(0xD740, 0xD743) | _ids(0xD745, 0xD74A, 0xD74B)),
    IntelFamily(key="nvl-p", name="Intel graphics (Nova Lake-P)", ids=_span(0xD750, 0xD757) | _ids(0xD75F)),
    IntelFamily(key="cri", name="Intel Data Center GPU (Crescent Island)", ids=_span(0x674C, 0x6750)),
    # Older Xe (Gen12) integrated and DG1: INTEL_TGL_IDS, INTEL_RKL_IDS, INTEL_DG1_IDS, INTEL_ADLS_IDS,
    # INTEL_ADLP_IDS, INTEL_ADLN_IDS, INTEL_RPLS_IDS, INTEL_RPLU_IDS, INTEL_RPLP_IDS
    IntelFamily(
        key="tgl",
        name="Intel Iris Xe / UHD graphics (Tiger Lake)",
        ids=_ids(0x9A60, 0x9A68, 0x9A70, 0x9A40, 0x9A49, 0x9A59, 0x9A78, 0x9AC0, 0x9AC9, 0x9AD9, 0x9AF8),
    ),
    IntelFamily(
        key="rkl", name="Intel UHD graphics (Rocket Lake)", ids=_ids(0x4C80, 0x4C8A, 0x4C8B, 0x4C8C, 0x4C90, 0x4C9A)
    ),
    IntelFamily(key="dg1", name="Intel Iris Xe MAX (DG1)", ids=_span(0x4905, 0x4909)),
    IntelFamily(
        key="adl-s",
        name="Intel UHD graphics (Alder Lake-S)",
        ids=_ids(0x4680, 0x4682, 0x4688, 0x468A, 0x468B, 0x4690, 0x4692, 0x4693),
    ),
    IntelFamily(
        key="adl-p",
        name="Intel Iris Xe / UHD graphics (Alder Lake-P)",
        ids=_span(0x46A0, 0x46A3)
        | _ids(0x46A6, 0x46A8, 0x46AA, 0x462A, 0x4626, 0x4628)
        | _span(0x46B0, 0x46B3)
        | _span(0x46C0, 0x46C3),
    ),
    IntelFamily(key="adl-n", name="Intel UHD graphics (Alder Lake-N)", ids=_span(0x46D0, 0x46D4)),
    IntelFamily(
        key="rpl",
        name="Intel Iris Xe / UHD graphics (Raptor Lake)",
        ids=_span(0xA780, 0xA783)
        | _span(0xA788, 0xA78B)
        | _ids(0xA721, 0xA7A1, 0xA7A9, 0xA7AC, 0xA7AD, 0xA720, 0xA7A0, 0xA7A8, 0xA7AA, 0xA7AB),
    ),
)


def intel_family(device_id: int) -> IntelFamily | None:
    """The family of an Intel PCI device id, None when the table does not know it."""
    return next((f for f in INTEL_FAMILIES if device_id in f.ids), None)


# Name patterns -> compute capability, most specific first (see the module docstring for the source).
_NVIDIA_CC_BY_NAME: Final[tuple[tuple[str, str], ...]] = (
    (r"\bGB300\b|\bB300\b", "10.3"),
    (r"\bGB200\b|\bB200\b|\bB100\b", "10.0"),
    (r"\bRTX PRO \d+ Blackwell\b|\bRTX 50[5-9]0\b", "12.0"),
    (r"\bGH200\b|\bH100\b|\bH200\b|\bH800\b|\bH20\b", "9.0"),
    (r"\bL4\b|\bL40S?\b|\bL20\b|\bRTX 40[5-9]0\b|\bRTX \d+ Ada\b", "8.9"),
    (r"\bA100\b|\bA800\b|\bA30\b", "8.0"),
    (r"\bA10G?\b|\bA16\b|\bA2\b|\bA40\b|\bRTX 30[5-9]0\b|\bRTX A\d{4}\b", "8.6"),
    (r"\bT4\b|\bRTX 20[6-8]0\b|\bGTX 16[5-6]0\b|\bQuadro RTX \d{4}\b|\bTITAN RTX\b", "7.5"),
    (r"\bV100\b|\bTITAN V\b", "7.0"),
    (r"\bP100\b|\bQuadro GP100\b", "6.0"),
    (r"\bP40\b|\bP4\b|\bGTX 10[5-8]0\b|\bTITAN Xp\b", "6.1"),
    (r"\bM60\b|\bM40\b|\bGTX 9[5-8]0\b", "5.2"),
    (r"\bK80\b", "3.7"),
)


def nvidia_capability_from_name(name: str) -> str:
    """`Tesla P100-PCIE-16GB` -> `6.0`; "" when the name is not in the table."""
    for pattern, capability in _NVIDIA_CC_BY_NAME:
        if re.search(pattern, name, re.IGNORECASE):
            return capability
    return ""
