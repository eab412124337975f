# Intel XPU layer on top of the common image (dockerfiles/Dockerfile, passed in as COMPAT_IMAGE).
#
# The torch XPU wheel brings the SYCL runtime and oneAPI math libraries as pip dependencies,
# but not the GPU user-space driver: the Level Zero loader (libze1), the compute runtime for
# Level Zero and OpenCL (libze-intel-gpu1, intel-opencl-icd) and its graphics memory library,
# all from Intel's GPU repository for the Ubuntu release of the base image. The kernel driver
# (i915/xe) stays on the host and reaches the container as /dev/dri.
# The health gate runs sycl-ls, which ships with the oneAPI DPC++ compiler package
# (ONEAPI_SYCL_PACKAGE) from Intel's oneAPI repository; clinfo is there for a second opinion.
ARG COMPAT_IMAGE=torch-compat/xpu-common
FROM ${COMPAT_IMAGE}
SHELL ["/bin/bash", "-eo", "pipefail", "-c"]
ARG COMPAT_UID=1000
USER 0
ARG ONEAPI_SYCL_PACKAGE=intel-oneapi-compiler-dpcpp-cpp
# hadolint ignore=DL3008
RUN apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends curl gnupg; \
    install -d -m 0755 /etc/apt/keyrings; \
    curl -fsSL https://repositories.intel.com/gpu/intel-graphics.key | gpg --dearmor -o /etc/apt/keyrings/intel-graphics.gpg; \
    curl -fsSL https://apt.repos.intel.com/intel-gpg-keys/GPG-PUB-KEY-INTEL-SW-PRODUCTS.PUB \
      | gpg --dearmor -o /etc/apt/keyrings/oneapi-archive-keyring.gpg; \
    codename="$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)"; \
    echo "deb [arch=amd64 signed-by=/etc/apt/keyrings/intel-graphics.gpg] https://repositories.intel.com/gpu/ubuntu ${codename} unified" \
      > /etc/apt/sources.list.d/intel-gpu.list; \
    echo "deb [signed-by=/etc/apt/keyrings/oneapi-archive-keyring.gpg] https://apt.repos.intel.com/oneapi all main" \
      > /etc/apt/sources.list.d/oneapi.list; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libze1 libze-intel-gpu1 intel-opencl-icd clinfo "${ONEAPI_SYCL_PACKAGE}"; \
    apt-get purge -y --auto-remove curl gnupg; \
    rm -rf /var/lib/apt/lists/*; \
    ln -sf /opt/intel/oneapi/compiler/latest/bin/sycl-ls /usr/local/bin/sycl-ls
LABEL torch-compat.runtime-tools="level-zero, intel compute runtime, sycl-ls, clinfo"
USER ${COMPAT_UID}:${COMPAT_UID}
