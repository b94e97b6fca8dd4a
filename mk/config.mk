# config.mk: compilers, flags and feature detection shared by every build rule.
# Quiet by default (one line per step); `make V=1` shows the full commands.
#
# Two programs per lab, on either side of the trust boundary (docs/integrity.md):
#   the harness   (CC = mpicc)  links libcommlab.a: MPI, NCCL, the simulator, seccomp
#                               (gcc and no MPI with MPI=no)
#   the student's (STUDENT_CC)  links libcommlab-student.a only, statically: no MPI,
#                               no NCCL, no library collective in its address space

BUILD    ?= build
STUDENT_CC ?= gcc
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Icommon -MMD -MP
STUDENT_CFLAGS := $(CFLAGS) -DCL_STUDENT_SIDE=1

# MPI: the harness links Open MPI where mpicc is found (MPI=auto). MPI=no builds it
# without (a GPU machine with no Open MPI): every program still runs, one GPU runs
# in one process without a launcher, and the cpu backend says it was not built.
# Build such a variant in a folder of its own: make BUILD=build-nompi MPI=no ...
MPI      ?= auto
MPICC    ?= mpicc
HOST_CC  ?= gcc
ifeq ($(MPI),auto)
HAVE_MPI := $(if $(shell command -v $(MPICC) 2>/dev/null),1,0)
else ifeq ($(MPI),no)
HAVE_MPI := 0
else
HAVE_MPI := 1
endif
ifeq ($(HAVE_MPI),1)
CC       := $(MPICC)
CFLAGS   += -DCL_HAVE_MPI=1
else
CC       := $(HOST_CC)
endif
LDLIBS   += -lseccomp -lm -lpthread
STUDENT_STATIC  := -static
STUDENT_LDFLAGS :=
STUDENT_LDLIBS  := -lm

# CUDA and NCCL: the gpu backend is built where nvcc and NCCL compile and link
# (a test build, mk/probe-cuda.sh). CUDA_HOME is found from nvcc (mk/find-cuda.sh);
# NCCL_HOME may point at another NCCL, in its own layout or the pip wheel's
# (include/ and lib/ under one folder); without it, an NCCL beside CUDA, else the
# wheel nvidia-nccl-cu13 of the machine's Python (mk/find-nccl.sh).
# The CUDA runtime is linked statically (nvcc's default): a built program needs
# only the driver and libnccl.so.2.
ifeq ($(origin CUDA_HOME),undefined)
CUDA_HOME := $(shell sh mk/find-cuda.sh)
endif
ifeq ($(origin NCCL_HOME),undefined)
NCCL_HOME := $(if $(wildcard $(CUDA_HOME)/include/nccl.h),,$(shell sh mk/find-nccl.sh))
endif
NVCC      := $(CUDA_HOME)/bin/nvcc
NCCL_INC  := $(if $(NCCL_HOME),$(NCCL_HOME)/include,$(CUDA_HOME)/include)
NCCL_LIBDIR := $(if $(NCCL_HOME),$(NCCL_HOME)/lib,$(CUDA_HOME)/lib64)
NCCL_LIB  := $(if $(wildcard $(NCCL_LIBDIR)/libnccl.so),-lnccl,-l:libnccl.so.2)
CUDART_LIBS := -lcudart_static -ldl -lrt -lpthread
ifeq ($(origin HAVE_CUDA),undefined)
HAVE_CUDA := $(shell CUDA_HOME=$(CUDA_HOME) NCCL_INC=$(NCCL_INC) NCCL_LIBDIR=$(NCCL_LIBDIR) \
                     NCCL_LIB=$(NCCL_LIB) CUDART_LIBS="$(CUDART_LIBS)" sh mk/probe-cuda.sh)
endif
ifeq ($(HAVE_CUDA),1)
CFLAGS    += -DCL_HAVE_CUDA=1 -I$(CUDA_HOME)/include -I$(NCCL_INC) \
             -DCL_BUILD_CUDA_HOME='"$(CUDA_HOME)"' -DCL_BUILD_NCCL_LIBDIR='"$(NCCL_LIBDIR)"'
# The course's machines: A100 (sm_80) and H100/H200 (sm_90), plus PTX for newer ones.
NVCCFLAGS ?= -O2 -std=c++17 -gencode arch=compute_80,code=sm_80 \
             -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
ifneq ($(GPU_FAKE),1)
LDLIBS    += -L$(CUDA_HOME)/lib64 -L$(NCCL_LIBDIR) -Wl,-rpath,$(NCCL_LIBDIR) $(NCCL_LIB) \
             $(CUDART_LIBS) -lstdc++
endif
endif
# Tests only (make BUILD=build-fake GPU_FAKE=1 ...): CUDA and NCCL replaced by a host
# stand-in with one rank (tests/gpu/fake_cuda.c), so the gpu backend runs without a GPU.

ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-6s %s\n' $(1) $(2)
endif

# Sanitizer builds: make SAN=1 test. AddressSanitizer cannot link statically:
# the student's program is then dynamic, and runs unfiltered (COMMLAB_SANITIZE).
ifeq ($(SAN),1)
BUILD   := build-san
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer
STUDENT_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
STUDENT_STATIC  :=
STUDENT_LDFLAGS := -fsanitize=address,undefined
endif
