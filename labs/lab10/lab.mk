# lab.mk: lab 10 links hwloc (topology, cpusets and binding).
lab10_LDLIBS := -lhwloc
