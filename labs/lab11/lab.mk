# lab.mk: lab 11's harness also links its GPU run (labs/lab11/harness/*.c, harness side
# only: the student's program never sees them; its kernels are the library's).
LAB11_HARNESS_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard labs/lab11/harness/*.c))
# The library again after them: they call its GPU kernels, and the linker reads an archive once.
lab11_LDLIBS := $(LAB11_HARNESS_OBJS) $(LIBCOMMLAB)
$(BUILD)/obj/labs/lab11/harness/%.o: CFLAGS += -Ilabs/lab11
$(BUILD)/labs/lab11/lab11 $(BUILD)/solutions/lab11/lab11: $(LAB11_HARNESS_OBJS)
ifdef LAB_OUT
$(LAB_OUT)/lab11: $(LAB11_HARNESS_OBJS)
endif
