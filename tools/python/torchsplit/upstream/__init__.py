"""``torchsplit upstream``: fetch real PyTorch source trees and restructure them under the split."""
