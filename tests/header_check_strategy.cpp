#include "halo/strategy.hpp"  // must compile on its own: first and only include
