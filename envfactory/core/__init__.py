"""The ground floor: domain models, errors and settings. Imports only stdlib and pydantic."""
