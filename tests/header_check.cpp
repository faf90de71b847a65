#include "halo/halo.hpp"  // must compile on its own: first and only include
