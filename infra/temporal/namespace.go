package temporal

import (
	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/workflowservice/v1"
)

type namespaceConfig = namespacepb.NamespaceConfig

func describeNamespace(ns string) *workflowservice.DescribeNamespaceRequest {
	return &workflowservice.DescribeNamespaceRequest{Namespace: ns}
}
