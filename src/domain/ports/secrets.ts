/** Seals platform credentials for storage, and opens them again, with the service's secret key. */
export interface CredentialVault {
  /** A compact string, `v1.<keyId>.<iv>.<tag>.<ciphertext>`, that reveals nothing of the value. */
  seal(value: object): string;
  /** The value seal() was given; throws when the string was altered or sealed with another key. */
  open<T>(sealed: string): T;
}

/** Signs and checks the text of a URL Herald hands out. */
export interface UrlSigner {
  sign(text: string): string;
  verify(text: string, signature: string): boolean;
}
