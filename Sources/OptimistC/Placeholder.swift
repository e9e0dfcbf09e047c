import Optimist
