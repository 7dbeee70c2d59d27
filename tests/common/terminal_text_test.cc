#include "common/terminal_text.h"

#include <gtest/gtest.h>
