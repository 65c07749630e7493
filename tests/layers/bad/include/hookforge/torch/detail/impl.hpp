// The torch layer's machinery.
#pragma once
