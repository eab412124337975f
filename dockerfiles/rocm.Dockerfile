# ROCm layer on top of the common image (dockerfiles/Dockerfile, passed in as COMPAT_IMAGE).
#
# The torch ROCm wheel bundles the HIP runtime and the math libraries (rocBLAS, MIOpen, ...);
# the amdgpu kernel driver stays on the host and reaches the container as /dev/kfd + /dev/dri.
# What the wheel does not carry is the tool the health gate runs: rocminfo (lists the HSA
# agents, i.e. the GPUs this container can use; exits non-zero without /dev/kfd). It comes
# from AMD's apt repository for the backend's ROCm release (ROCM_VERSION = runtime_version of
# the rocm backend in harness/backends.toml), for the Ubuntu release of the base image.
ARG COMPAT_IMAGE=torch-compat/rocm-common
FROM ${COMPAT_IMAGE}
SHELL ["/bin/bash", "-eo", "pipefail", "-c"]
ARG COMPAT_UID=1000
USER 0
ARG ROCM_VERSION=7.2
# hadolint ignore=DL3008
RUN apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends curl gnupg; \
    install -d -m 0755 /etc/apt/keyrings; \
    curl -fsSL https://repo.radeon.com/rocm/rocm.gpg.key | gpg --dearmor -o /etc/apt/keyrings/rocm.gpg; \
    codename="$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)"; \
    echo "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/${ROCM_VERSION} ${codename} main" \
      > /etc/apt/sources.list.d/rocm.list; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends rocminfo; \
    apt-get purge -y --auto-remove curl gnupg; \
    rm -rf /var/lib/apt/lists/*; \
    ln -sf /opt/rocm/bin/rocminfo /usr/local/bin/rocminfo
LABEL torch-compat.runtime-tools="rocminfo (ROCm ${ROCM_VERSION})"
USER ${COMPAT_UID}:${COMPAT_UID}
