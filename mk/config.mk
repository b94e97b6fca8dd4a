# config.mk: compilers, flags and feature detection shared by every build rule.
# Quiet by default (one line per step); `make V=1` shows the full commands.
#
# Two programs per lab, on either side of the trust boundary (docs/integrity.md):
#   the harness   (CC = mpicc)  links libcommlab.a: MPI, NCCL, the simulator, seccomp
#   the student's (STUDENT_CC)  links libcommlab-student.a only, statically: no MPI,
#                               no NCCL, no library collective in its address space

BUILD    ?= build
CC       := mpicc
STUDENT_CC ?= gcc
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Icommon -MMD -MP
STUDENT_CFLAGS := $(CFLAGS) -DCL_STUDENT_SIDE=1
LDLIBS   += -lseccomp -lm -lpthread
STUDENT_STATIC  := -static
STUDENT_LDFLAGS :=
STUDENT_LDLIBS  := -lm

# CUDA and NCCL: the gpu backend is built where nvcc and NCCL compile and link
# (a test build, mk/probe-cuda.sh). NCCL_HOME may point at another NCCL, in
# its own layout or the pip wheel's (include/ and lib/ under one folder).
CUDA_HOME ?= /usr/local/cuda
NCCL_HOME ?=
NVCC      := $(CUDA_HOME)/bin/nvcc
NCCL_INC  := $(if $(NCCL_HOME),$(NCCL_HOME)/include,$(CUDA_HOME)/include)
NCCL_LIBDIR := $(if $(NCCL_HOME),$(NCCL_HOME)/lib,$(CUDA_HOME)/lib64)
NCCL_LIB  := $(if $(wildcard $(NCCL_LIBDIR)/libnccl.so),-lnccl,-l:libnccl.so.2)
HAVE_CUDA ?= $(shell CUDA_HOME=$(CUDA_HOME) NCCL_INC=$(NCCL_INC) NCCL_LIBDIR=$(NCCL_LIBDIR) \
                     NCCL_LIB=$(NCCL_LIB) sh mk/probe-cuda.sh)
ifeq ($(HAVE_CUDA),1)
CFLAGS    += -DCL_HAVE_CUDA=1 -I$(CUDA_HOME)/include -I$(NCCL_INC)
# The course's machines: A100 (sm_80) and H100/H200 (sm_90), plus PTX for newer ones.
NVCCFLAGS ?= -O2 -std=c++17 -gencode arch=compute_80,code=sm_80 \
             -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
LDLIBS    += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 \
             -L$(NCCL_LIBDIR) -Wl,-rpath,$(NCCL_LIBDIR) $(NCCL_LIB) -lcudart -lstdc++
endif

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
