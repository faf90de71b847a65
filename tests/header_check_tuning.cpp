#include "halo/tuning.hpp"  // must compile on its own: first and only include
