# lab.mk: lab 12 reads PCIe trees with hwloc.
lab12_LDLIBS := -lhwloc
