# library.mk: build/lib/libcommlab.a, the library every lab and tool links.

LIB_SRCS := $(wildcard common/*.c common/sim/*.c)
ifeq ($(HAVE_CUDA),1)
LIB_SRCS += common/gpu/p2p_nccl.c
LIB_CUS  := common/gpu/reduce_kernels.cu
else
LIB_SRCS += common/gpu/p2p_nccl_none.c
LIB_CUS  :=
endif
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(LIB_CUS:%.cu=$(BUILD)/obj/%.o)
LIBCOMMLAB := $(BUILD)/lib/libcommlab.a

lib: $(LIBCOMMLAB)

$(LIBCOMMLAB): $(LIB_OBJS)
	$(call say,AR,$@)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/%.o: %.c
	$(call say,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.cu
	$(call say,NVCC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(NVCC) $(NVCCFLAGS) -Icommon -c $< -o $@

-include $(LIB_OBJS:.o=.d)
