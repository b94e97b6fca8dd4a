# cli.mk: build/bin/commlab, the command line for users (topo, doctor, sim).

CLI_SRCS := $(wildcard cli/*.c)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
COMMLAB  := $(BUILD)/bin/commlab

cli: $(COMMLAB)

$(COMMLAB): $(CLI_OBJS) $(LIBCOMMLAB)
	$(call say,LINK,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIBCOMMLAB) $(LDLIBS)

-include $(CLI_OBJS:.o=.d)
