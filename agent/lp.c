/* placeholder until the encoder lands */
#include "lp.h"
