#include "halo/model.hpp"  // must compile on its own: first and only include
