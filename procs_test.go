package zipline

import "runtime"

func runtimeGOMAXPROCS() int { return runtime.GOMAXPROCS(0) }
