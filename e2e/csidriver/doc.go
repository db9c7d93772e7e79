// Package csidriver runs the real GD2-era CSI file driver (the binary make
// csi-driver builds from gluster/gluster-csi-driver 168a40e) with the
// arguments anthill's controller pod gives it, against the GD2 simulator
// over real HTTP, and drives it over its CSI socket as the sidecars would:
// what kwok's nodes, which run no container, cannot show. Where the driver
// is not built its tests skip and say why. Build tag e2e.
package csidriver
