"""What a step costs: the rates from genai-prices, which dated or time-of-day price
is in force at a step's time, and the price context a recorded request asks for.

Imports: :mod:`assembler.sessions` and the rest of :mod:`assembler.cache`; nothing
is re-exported here, so that the simulators never load prices.
"""
