#!/usr/bin/env bash
# Run a command as on a host without AVX512: the libraries' own switches keep torch (ATen, oneDNN, MKL), numpy and
# OpenBLAS on their AVX2 kernels (no AVX512, no native bf16). Clock and cache stay the host's, so this shows the
# instruction set's share of a timing, not another machine's. Example: bash scripts/as_avx2_host.sh bash scripts/test.sh
set -euo pipefail
export ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2
export OPENBLAS_CORETYPE=Haswell NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"
exec "$@"
