export interface CredentialVault {
  seal(value: object): string;
  open<T>(sealed: string): T;
}
