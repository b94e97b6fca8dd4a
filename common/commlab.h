/* commlab.h: the umbrella header of the CommLab library; labs include this. */
#ifndef COMMLAB_H
#define COMMLAB_H

#include "data.h"
#include "dtype.h"
#include "json.h"
#include "p2p.h"
#include "result.h"
#include "shm.h"
#include "stats.h"
#include "timing.h"
#include "topo.h"

#endif /* COMMLAB_H */
