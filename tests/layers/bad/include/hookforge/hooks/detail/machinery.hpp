// The hooks layer's machinery.
#pragma once
