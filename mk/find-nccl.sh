#!/bin/sh
# find-nccl.sh: print the folder of the NCCL pip wheel (nvidia-nccl-cu13 or -cu12:
# site-packages/nvidia/nccl, with include/nccl.h and lib/libnccl.so.2) of the
# machine's Python, or nothing. Used by mk/config.mk when NCCL_HOME is not set and
# CUDA has no nccl.h of its own.
for py in python3 /usr/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    dir=$("$py" -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null) || continue
    if [ -f "$dir/include/nccl.h" ] && [ -f "$dir/lib/libnccl.so.2" ]; then
        echo "$dir"
        exit 0
    fi
done
exit 0
