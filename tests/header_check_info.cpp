#include "halo/info.hpp"  // must compile on its own: first and only include
