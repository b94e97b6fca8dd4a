#!/bin/sh
# find-cuda.sh: print the CUDA toolkit's folder (the one whose bin/nvcc exists):
# $CUDA_PATH, /usr/local/cuda, the nvcc on PATH, then the newest /usr/local/cuda-*.
# Prints /usr/local/cuda when there is none (the build then has no GPU backend).
on_path=$(command -v nvcc 2>/dev/null)
for d in "${CUDA_PATH:-}" /usr/local/cuda "${on_path%/bin/nvcc}" \
         $(ls -d /usr/local/cuda-* 2>/dev/null | sort -t- -k2 -V -r); do
    if [ -n "$d" ] && [ -x "$d/bin/nvcc" ]; then
        echo "$d"
        exit 0
    fi
done
echo /usr/local/cuda
