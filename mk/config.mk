# config.mk: compilers, flags and feature detection shared by every build rule.
# Quiet by default (one line per step); `make V=1` shows the full commands.

BUILD    ?= build
CC       := mpicc
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Icommon -MMD -MP
LDLIBS   += -lm -lpthread

# CUDA and NCCL: the gpu backend is compiled wherever nvcc exists.
CUDA_HOME ?= /usr/local/cuda
NVCC      := $(CUDA_HOME)/bin/nvcc
HAVE_CUDA := $(shell test -x $(NVCC) && test -f $(CUDA_HOME)/include/nccl.h && echo 1)
ifeq ($(HAVE_CUDA),1)
CFLAGS    += -DCL_HAVE_CUDA=1 -I$(CUDA_HOME)/include
NVCCFLAGS ?= -O2 -arch=sm_90 -std=c++17
LDLIBS    += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lnccl -lcudart -lstdc++
endif

ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-6s %s\n' $(1) $(2)
endif

# Sanitizer builds: make SAN=1 test
ifeq ($(SAN),1)
BUILD   := build-san
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
