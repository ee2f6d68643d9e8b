"""The network floor: one configured httpx client, transports, budgets. Imports only the bottom layers."""
