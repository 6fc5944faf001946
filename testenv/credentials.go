package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// adminUser is the user the admin token authenticates as. Membership of system:masters makes
// it a superuser under RBAC without any binding.
const (
	adminUser  = "kinformer-admin"
	adminGroup = "system:masters"
)

// credentials are the files the apiserver is started with and what a client needs to trust
// and authenticate to it. They are generated fresh for every Env, so nothing secret outlives
// the temporary directory.
type credentials struct {
	caPEM          []byte // trust anchor for the serving certificate
	servingCert    string // path: certificate for 127.0.0.1 and localhost, signed by the CA
	servingKey     string // path: its private key
	serviceAccount string // path: private key that signs and verifies service-account tokens
	tokenFile      string // path: --token-auth-file with the admin token
	adminToken     string // bearer token of adminUser
}

// writeCredentials generates a CA, a loopback serving certificate, a service-account signing
// key and an admin bearer token, and writes them under dir.
func writeCredentials(dir string) (*credentials, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("testenv: credentials directory: %w", err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testenv: CA key: %w", err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kinformer-testenv-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("testenv: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("testenv: CA certificate: %w", err)
	}

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testenv: serving key: %w", err)
	}
	servingTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTemplate, ca, &servingKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("testenv: serving certificate: %w", err)
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testenv: service-account key: %w", err)
	}

	token := make([]byte, 24)
	if _, err := rand.Read(token); err != nil {
		return nil, fmt.Errorf("testenv: admin token: %w", err)
	}

	c := &credentials{
		caPEM:          pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		servingCert:    filepath.Join(dir, "apiserver.crt"),
		servingKey:     filepath.Join(dir, "apiserver.key"),
		serviceAccount: filepath.Join(dir, "service-account.key"),
		tokenFile:      filepath.Join(dir, "tokens.csv"),
		adminToken:     hex.EncodeToString(token),
	}
	servingKeyPEM, err := ecKeyPEM(servingKey)
	if err != nil {
		return nil, err
	}
	saKeyPEM, err := ecKeyPEM(saKey)
	if err != nil {
		return nil, err
	}
	// The token file is CSV: token,user,uid,"group1,group2".
	tokens := fmt.Sprintf("%s,%s,%s,%q\n", c.adminToken, adminUser, adminUser, adminGroup)
	files := []struct {
		path string
		data []byte
	}{
		{filepath.Join(dir, "ca.crt"), c.caPEM},
		{c.servingCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: servingDER})},
		{c.servingKey, servingKeyPEM},
		{c.serviceAccount, saKeyPEM},
		{c.tokenFile, []byte(tokens)},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return nil, fmt.Errorf("testenv: write %s: %w", f.path, err)
		}
	}
	return c, nil
}

func ecKeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("testenv: encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}
