#include "xla_plugin/stablehlo/stablehlo_attributes.h"
