// Package disruption is the disruption machine's room: the syncer that
// keeps each cluster's PodDisruptionBudgets and opens a zone for a
// Kubernetes node drain only when its bricks can stop safely.
package disruption
