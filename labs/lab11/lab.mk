# lab.mk: lab 11's harness also links its GPU run (labs/lab11/harness/*.c, harness side
# only: the student's program never sees them; kernels.cu is the harness's too).
LAB11_HARNESS_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard labs/lab11/harness/*.c))
lab11_LDLIBS := $(LAB11_HARNESS_OBJS)
$(BUILD)/obj/labs/lab11/harness/%.o: CFLAGS += -Ilabs/lab11
$(BUILD)/labs/lab11/lab11 $(BUILD)/solutions/lab11/lab11: $(LAB11_HARNESS_OBJS)
ifdef LAB_OUT
$(LAB_OUT)/lab11: $(LAB11_HARNESS_OBJS)
endif
