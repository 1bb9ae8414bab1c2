/** Associated data a workspace provider secret is sealed with: it cannot be moved to another workspace or provider. */
export const providerCredentialAad = (workspaceId: string, provider: string) => `${workspaceId}${provider}`;
