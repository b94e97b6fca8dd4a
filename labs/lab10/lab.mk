# lab.mk: lab 10 links hwloc on both sides. libhwloc.a needs libudev, which has no
# static library: the student's program is dynamic (it may then open files read-only,
# which hwloc needs to load this machine's topology).
lab10_LDLIBS := -lhwloc
lab10_STUDENT_LDLIBS := -lhwloc
lab10_STUDENT_STATIC := no
