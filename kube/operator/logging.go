package operator

import (
	"fmt"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

// NewLogger returns the operator's JSON logger at level ("debug", "info",
// "warn", "error") and routes klog (client-go, leader election) into it, so
// the operator writes one log stream in one format.
func NewLogger(level string) (*zap.Logger, error) {
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.EncoderConfig.TimeKey = "ts"
	cfg.EncoderConfig.EncodeTime = zapcore.RFC3339NanoTimeEncoder
	cfg.Sampling = nil // transitions must never be sampled away
	log, err := cfg.Build()
	if err != nil {
		return nil, err
	}
	klog.SetLogger(zapr.NewLogger(log.Named("klog")))
	return log, nil
}
