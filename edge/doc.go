// Package edge is the HTTP front door: fasthttp server, routing, authentication and the error envelope.
package edge
