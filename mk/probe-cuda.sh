#!/bin/sh
# probe-cuda.sh: print 1 when nvcc exists and a program using NCCL and the CUDA
# runtime compiles and links as the build links it, else nothing. Used by mk/config.mk.
[ -x "$CUDA_HOME/bin/nvcc" ] || exit 0
[ -f "$NCCL_INC/nccl.h" ] || exit 0
dir=$(mktemp -d) || exit 0
trap 'rm -rf "$dir"' EXIT
cat > "$dir/p.c" <<'C'
#include <cuda_runtime.h>
#include <nccl.h>
int main(void) { int v = 0; int n = 0; ncclGetVersion(&v); cudaGetDeviceCount(&n); return 0; }
C
cc -I"$CUDA_HOME/include" -I"$NCCL_INC" -o "$dir/p" "$dir/p.c" -L"$CUDA_HOME/lib64" \
   -L"$NCCL_LIBDIR" $NCCL_LIB ${CUDART_LIBS:--lcudart} >/dev/null 2>&1 && echo 1
