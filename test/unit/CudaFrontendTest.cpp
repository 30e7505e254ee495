#include "CudaTestSupport.h"
