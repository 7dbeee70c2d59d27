#include "common/duration.h"

#include <gtest/gtest.h>
